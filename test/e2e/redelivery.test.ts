/**
 * End to end: at-least-once delivery. A delivery that is not answered is
 * handed out again (stream closed → at once; silent past its lease → after
 * it), with the same idempotency key and a higher delivery number; the stale
 * delivery's answer is refused (Ack 9) and changes nothing; heartbeats keep a
 * lease alive; Fail retries (attempt 2, same key) or dead-letters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveredRunInfo, ScheduleInput, TimelaneClient, WorkStream } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  closeClient,
  closeStream,
  daemonProblems,
  openClient,
  openStream,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
} from '../helpers/e2e.js';

const SHARDS = 4;
const FAILED_PRECONDITION = 9;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
const streams: WorkStream[] = [];

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    args: ['--member-id', 'redelivery', '--reap-interval-ms', '200'],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  for (const s of streams) await closeStream(s);
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

function stream(queue: string, maxInFlight = 10): WorkStream {
  const s = openStream(daemon!.address, { queues: [queue], maxInFlight, workerId: `w-${streams.length}` });
  streams.push(s);
  return s;
}

async function scheduleSoon(input: Omit<ScheduleInput, 'delayMs'> & { delayMs?: number }) {
  return client.schedule({ delayMs: 100, ...input });
}

/** Expects no run on `s` for `ms` (pull mode). */
async function expectNoRun(s: WorkStream, ms: number): Promise<void> {
  const got = await s.nextRun(ms).then(
    (r) => r,
    () => null,
  );
  expect(got, got ? `unexpected delivery ${got.delivery} of run ${got.runId}` : '').toBeNull();
}

function sameRun(a: DeliveredRunInfo, b: DeliveredRunInfo): void {
  expect(b.runId).toBe(a.runId);
  expect(b.jobId).toBe(a.jobId);
  expect(b.attempt).toBe(a.attempt);
  expect(b.idempotencyKey).toBe(a.idempotencyKey);
  expect(b.dueAtMs).toBe(a.dueAtMs);
  expect(b.payload.equals(a.payload)).toBe(true);
}

describe('redelivery after the stream closes', () => {
  it.each(['end', 'cancel'] as const)('a run delivered on a stream that %s-s unanswered goes to another worker', async (how) => {
    const queue = `closed-${how}`;
    const s1 = stream(queue);
    const { run: scheduled } = await scheduleSoon({ queue, payload: { how } });
    const first = await s1.nextRun(10_000);
    expect(first.runId).toBe(scheduled.id);
    expect(first.delivery).toBe(1);
    expect(first.idempotencyKey).not.toBe('');
    expect(first.mode).toBe('at_least_once');

    // The second worker connects only now, so the first delivery surely went to s1.
    const s2 = stream(queue);
    await sleep(200);
    await expectNoRun(s2, 300); // s1 still holds it
    if (how === 'end') await s1.close(5_000);
    else s1.cancel();
    await s1.finished;

    const second = await s2.nextRun(10_000);
    sameRun(first, second);
    expect(second.delivery).toBeGreaterThan(first.delivery);

    // The old delivery's answer is refused and changes nothing.
    s2.complete(first.ref);
    const stale = await s2.nextAck(5_000);
    expect(stale).toMatchObject({ runId: first.runId, code: FAILED_PRECONDITION });
    let run = await client.getRun(first.runId);
    expect(run.status).toBe('fired');
    expect(run.deliveries).toBe(second.delivery);
    expect(run.finishedAtMs).toBe(0);

    s2.complete(second.ref);
    expect(await s2.nextAck(5_000)).toMatchObject({ runId: first.runId, code: 0 });
    run = await client.getRun(first.runId);
    expect(run.status).toBe('completed');
    expect(run.deliveries).toBe(second.delivery);
    expect((await client.getJob(first.jobId)).job.status).toBe('completed');
    await expectNoRun(s2, 500);
  });
});

describe('redelivery after the lease runs out', () => {
  it('a connected but silent worker past lease_ms gets the run again; the stale Complete is refused', async () => {
    const queue = 'silent';
    const s = stream(queue);
    const t0 = Date.now();
    const { run: scheduled } = await scheduleSoon({ queue, leaseMs: 1_000, delayMs: 0 });
    const first = await s.nextRun(10_000);
    expect(first.runId).toBe(scheduled.id);
    expect(first.leaseExpiresAtMs).toBeGreaterThan(first.firedAtMs);
    expect(first.leaseExpiresAtMs - first.firedAtMs).toBeLessThanOrEqual(1_000 + 100);

    const second = await s.nextRun(10_000);
    sameRun(first, second);
    expect(second.delivery).toBe(first.delivery + 1);
    // Not before the first delivery's lease ran out (a little slack: the lease is judged by Postgres's clock).
    expect(second.receivedAtMs, `redelivered ${Math.round(first.leaseExpiresAtMs - second.receivedAtMs)} ms before the lease ran out`).toBeGreaterThanOrEqual(first.leaseExpiresAtMs - 50);
    expect(second.leaseExpiresAtMs).toBeGreaterThan(first.leaseExpiresAtMs);
    expect(Date.now() - t0).toBeLessThan(10_000);

    s.complete(first.ref);
    const stale = await s.nextAck(5_000);
    expect(stale.code).toBe(FAILED_PRECONDITION);
    expect(stale.runId).toBe(first.runId);
    let run = await client.getRun(first.runId);
    expect(run.status).toBe('fired');
    expect(run.deliveries).toBe(second.delivery);

    s.complete(second.ref);
    expect((await s.nextAck(5_000)).code).toBe(0);
    run = await client.getRun(first.runId);
    expect(run.status).toBe('completed');
    expect(run.deliveries).toBe(2);

    // A late answer for the old delivery after completion is refused too.
    s.fail(first.ref, true, 'too late');
    expect((await s.nextAck(5_000)).code).toBe(FAILED_PRECONDITION);
    run = await client.getRun(first.runId);
    expect(run.status).toBe('completed');
    expect(run.error).toBe('');
    await expectNoRun(s, 1_500);
  });

  it('heartbeats every 300 ms keep a 1,000 ms lease: delivered exactly once over 3 s', async () => {
    const queue = 'heartbeat';
    const s = stream(queue);
    const runs: DeliveredRunInfo[] = [];
    const acks: number[] = [];
    s.onRun((r) => runs.push(r));
    s.onAck((a) => acks.push(a.code));
    await scheduleSoon({ queue, leaseMs: 1_000, delayMs: 0 });
    expect(await waitUntil(() => runs.length > 0, 10_000)).toBe(true);
    const run = runs[0];
    const timer = setInterval(() => s.heartbeat(run.ref, 0.5), 300);
    try {
      await sleep(3_000);
    } finally {
      clearInterval(timer);
    }
    expect(runs.map((r) => r.delivery)).toEqual([1]);
    expect(acks.length).toBeGreaterThanOrEqual(5);
    expect(acks.every((c) => c === 0), `heartbeat acks: ${acks.join(',')}`).toBe(true);
    const info = await client.getRun(run.runId);
    expect(info.status).toBe('fired');
    expect(info.deliveries).toBe(1);
    expect(info.leaseExpiresAtMs).toBeGreaterThan(run.leaseExpiresAtMs);

    s.complete(run.ref);
    expect(await waitUntil(() => acks.length > 0 && runs.length === 1, 5_000)).toBe(true);
    expect(await waitUntil(async () => (await client.getRun(run.runId)).status === 'completed', 5_000)).toBe(true);
    await sleep(1_500); // past the lease: still once
    expect(runs).toHaveLength(1);
  });
});

describe('lease of a run that waited for worker credit', () => {
  it('reaches the worker with its lease intact, and an answer within lease_ms is accepted (delivered once)', async () => {
    const queue = 'parked';
    const s = stream(queue, 1); // credit 1: the second run must wait in the daemon
    const runs: DeliveredRunInfo[] = [];
    const acks: { runId: string; code: number }[] = [];
    s.onRun((r) => runs.push(r));
    s.onAck((a) => acks.push(a));
    const [a, b] = await client.scheduleBatch([
      { queue, delayMs: 0, leaseMs: 1_000 },
      { queue, delayMs: 0, leaseMs: 1_000 },
    ]);
    expect(await waitUntil(() => runs.length >= 1, 10_000)).toBe(true);
    const first = runs[0];
    const parkedId = first.runId === a.run.id ? b.run.id : a.run.id;
    // Hold the first run (heartbeating, so it keeps its own lease) past the time the parked run's
    // lease would run out if it started at the claim: free the credit when, by GetRun, a few hundred
    // ms of that lease are left (so the reaper has not re-claimed it yet).
    const timer = setInterval(() => s.heartbeat(first.ref, 0.1), 300);
    const holdFrom = Date.now();
    try {
      await sleep(1_000);
      for (;;) {
        const parked = await client.getRun(parkedId);
        const left = parked.leaseExpiresAtMs - Date.now();
        if (Date.now() - holdFrom > 2_500 || (parked.leaseExpiresAtMs > 0 && left > 100 && left < 350)) break;
        await sleep(25);
      }
    } finally {
      clearInterval(timer);
    }
    expect(runs).toHaveLength(1);
    s.complete(first.ref);
    expect(await waitUntil(() => runs.length >= 2, 10_000)).toBe(true);
    const second = runs[1];
    expect(second.runId).toBe(parkedId);
    // The lease is the worker's time to answer: it starts when the run is handed out, not
    // when it was claimed and parked.
    const remaining = second.leaseExpiresAtMs - second.receivedAtMs;
    // Answer well within the job's 1,000 ms lease.
    await sleep(600);
    s.complete(second.ref);
    expect(await waitUntil(() => acks.some((x) => x.runId === second.runId), 5_000)).toBe(true);
    await sleep(1_500);
    const ack = acks.find((x) => x.runId === second.runId)!;
    const deliveries = runs.filter((r) => r.runId === parkedId).map((r) => r.delivery);
    expect(
      { remainingLeaseAtReceipt: remaining >= 500, ack: ack.code, deliveries: deliveries.length },
      `lease left at receipt ${Math.round(remaining)} ms; deliveries ${deliveries.join(',')}`,
    ).toEqual({ remainingLeaseAtReceipt: true, ack: 0, deliveries: 1 });
    expect((await client.getRun(parkedId)).status).toBe('completed');
  });
});

describe('Fail', () => {
  it('retryable: a retry run (attempt 2, same idempotency key) arrives', async () => {
    const queue = 'fail-retry';
    const s = stream(queue);
    const { job } = await scheduleSoon({ queue, retry: { maxAttempts: 3, initialBackoffMs: 100 } });
    const first = await s.nextRun(10_000);
    expect(first.attempt).toBe(1);
    s.fail(first.ref, true, 'flaky');
    const ack = await s.nextAck(5_000);
    expect(ack.code).toBe(0);
    expect(ack.retryRunId).not.toBe('');
    expect(ack.retryRunId).not.toBe(first.runId);

    const retry = await s.nextRun(10_000);
    expect(retry.runId).toBe(ack.retryRunId);
    expect(retry.jobId).toBe(job.id);
    expect(retry.attempt).toBe(2);
    expect(retry.delivery).toBe(1);
    expect(retry.idempotencyKey).toBe(first.idempotencyKey);
    expect(retry.dueAtMs).toBeGreaterThanOrEqual(first.dueAtMs);

    s.complete(retry.ref);
    expect((await s.nextAck(5_000)).code).toBe(0);
    const { job: after, runs } = await client.getJob(job.id);
    expect(after.status).toBe('completed');
    expect(runs.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
    expect(runs[0].error).toBe('flaky');
  });

  it('not retryable: the run is dead and the job is dead at once', async () => {
    const queue = 'fail-dead';
    const s = stream(queue);
    const { job } = await scheduleSoon({ queue, retry: { maxAttempts: 5 } });
    const first = await s.nextRun(10_000);
    s.fail(first.ref, false, 'bad payload');
    const ack = await s.nextAck(5_000);
    expect(ack.code).toBe(0);
    expect(ack.retryRunId).toBe('');
    const { job: after, runs } = await client.getJob(job.id);
    expect(after.status).toBe('dead');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'dead', error: 'bad payload', attempt: 1 });
    expect(runs[0].finishedAtMs).toBeGreaterThan(0);
    await expectNoRun(s, 1_000);
  });

  it('exhausting max_attempts: the last attempt is dead', async () => {
    const queue = 'fail-exhaust';
    const s = stream(queue);
    const { job } = await scheduleSoon({ queue, retry: { maxAttempts: 2, initialBackoffMs: 50, maxBackoffMs: 100 } });
    const first = await s.nextRun(10_000);
    s.fail(first.ref, true, 'one');
    const ack1 = await s.nextAck(5_000);
    expect(ack1.code).toBe(0);
    expect(ack1.retryRunId).not.toBe('');
    const second = await s.nextRun(10_000);
    expect(second.attempt).toBe(2);
    expect(second.idempotencyKey).toBe(first.idempotencyKey);
    s.fail(second.ref, true, 'two');
    const ack2 = await s.nextAck(5_000);
    expect(ack2.code).toBe(0);
    expect(ack2.retryRunId).toBe('');
    const { job: after, runs } = await client.getJob(job.id);
    expect(after.status).toBe('dead');
    expect(runs.map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, 'failed', 'one'],
      [2, 'dead', 'two'],
    ]);
    await expectNoRun(s, 1_000);
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});
