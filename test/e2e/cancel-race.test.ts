/**
 * End to end: CancelJob and RescheduleJob against the fast lane (I-4).
 * A cancel before the due time wins; a cancel racing the deadline either
 * cancels (runs_cancelled = 1, never delivered), or finds the run fired
 * (claimed: runs_cancelled = 0) and then either stops it before it started
 * — taken back from the daemon's release gate or from the worker holding it
 * (staging): ends cancelled, never delivered — or is too late: delivered
 * exactly once. Never both, never neither. A reschedule moves the
 * fire to the new time, far → near, near → far and near → later.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CancelResult, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import {
  closeClient,
  collectRuns,
  daemonProblems,
  grpcError,
  openClient,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 8;
const HOUR = 3_600_000;

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker | undefined;
const QUEUES = ['cancel-early', 'cancel-race', 'resched'];

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', 'cancel-race', '--redis-prefix', prefix],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({ address: daemon.address, queues: QUEUES, concurrency: 500 });
});

afterAll(async () => {
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

describe('CancelJob', () => {
  it('cancelled before its due time: never fires', async () => {
    const due = Date.now() + 1_200;
    const scheduled = await client.scheduleBatch(Array.from({ length: 20 }, () => ({ queue: 'cancel-early', at: due })));
    const cancelled = await Promise.all(scheduled.map((s) => client.cancelJob(s.job.id)));
    expect(cancelled.map((c) => c.runsCancelled)).toEqual(scheduled.map(() => 1));
    expect(cancelled.every((c) => c.job.status === 'cancelled')).toBe(true);
    // A second cancel changes nothing.
    const again = await client.cancelJob(scheduled[0].job.id);
    expect(again.runsCancelled).toBe(0);
    expect(again.job.status).toBe('cancelled');

    await sleep(Math.max(0, due - Date.now()) + 1_500);
    for (const s of scheduled) expect(worker!.recorder.has(s.run.id)).toBe(false);
    const { runs } = await client.getJob(scheduled[0].job.id);
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('cancelled');
    expect(runs[0].firedAtMs).toBe(0);
    expect((await client.listRuns({ queue: 'cancel-early', status: 'cancelled' })).runs).toHaveLength(20);
  });

  it('200 cancels racing the deadline: each run is either cancelled or fired once, never both, never neither', async () => {
    const N = 200;
    // This machine may be slow: measure how long a burst of cancels takes, so the
    // sends can be spread such that they land on both sides of T (some exactly at T ± few ms).
    const probe = await client.scheduleBatch(Array.from({ length: 40 }, () => ({ queue: 'cancel-race', delayMs: HOUR })));
    const p0 = Date.now();
    await Promise.all(probe.map((p) => client.cancelJob(p.job.id)));
    const perCancelMs = (Date.now() - p0) / probe.length;
    const halfSpread = Math.max(20, Math.round((perCancelMs * N) / 2));

    const T = Date.now() + 1_500 + halfSpread;
    const scheduled = await client.scheduleBatch(Array.from({ length: N }, (_, i) => ({ queue: 'cancel-race', at: T, payload: { i } })));
    const scheduledBy = T - Date.now(); // (if the machine is slow this may be small: the race is then one-sided, still valid)
    // Cancel i at T + offset(i): offsets alternate around 0 and widen to ±halfSpread,
    // so the first ones go out at T ± a few ms.
    const offsetOf = (i: number): number => (i % 2 === 0 ? 1 : -1) * Math.floor(((i >> 1) * 2 * halfSpread) / N);
    const outcomes = await Promise.all(
      scheduled.map(
        (s, i) =>
          new Promise<{ res?: CancelResult; err?: unknown; sentAt: number; doneAt: number }>((resolve) => {
            setTimeout(() => {
              const sentAt = Date.now();
              client.cancelJob(s.job.id).then(
                (res) => resolve({ res, sentAt, doneAt: Date.now() }),
                (err: unknown) => resolve({ err, sentAt, doneAt: Date.now() }),
              );
            }, T + offsetOf(i) - Date.now());
          }),
      ),
    );
    expect(outcomes.filter((o) => o.err).map((o) => String(o.err))).toEqual([]);
    await sleep(2_000); // let every fire land, and any wrong one show up

    const rec = worker!.recorder;
    // Final statuses: a fired run stopped before it started ends cancelled once its lease is ended (at once).
    const statusOf = async (): Promise<Map<string, string>> => new Map((await client.listRuns({ queue: 'cancel-race', pageSize: 1000 })).runs.map((r) => [r.id, r.status]));
    let statuses = new Map<string, string>();
    await waitUntil(async () => {
      statuses = await statusOf();
      return scheduled.every((s) => statuses.get(s.run.id) !== 'fired' || rec.count(s.run.id) > 0);
    }, 10_000, 100);
    let won = 0;
    let wonLate = 0;
    let lost = 0;
    const violations: string[] = [];
    for (let i = 0; i < N; i++) {
      const s = scheduled[i];
      const n = rec.count(s.run.id);
      const cancelled = outcomes[i].res!.runsCancelled;
      if (cancelled === 1) {
        won++;
        if (n !== 0) violations.push(`run ${s.run.id}: cancelled (runs_cancelled=1) but delivered ${n}x`);
        if (outcomes[i].res!.job.status !== 'cancelled') violations.push(`job ${s.job.id}: cancelled but job is ${outcomes[i].res!.job.status}`);
      } else if (cancelled === 0) {
        if (n === 0 && statuses.get(s.run.id) === 'cancelled') wonLate++; // fired, stopped before it started
        else if (n === 1) lost++;
        else violations.push(`run ${s.run.id}: not cancelled (runs_cancelled=0), delivered ${n}x, now ${statuses.get(s.run.id)}`);
      } else violations.push(`run ${s.run.id}: runs_cancelled=${cancelled}`);
    }
    const sent = outcomes.map((o) => o.sentAt - T);
    const took = outcomes.map((o) => o.doneAt - o.sentAt);
    console.log(`[cancel-race] ${won} cancels won, ${wonLate} stopped a fired run before it started, ${lost} lost the race to the fire; sent T${Math.min(...sent)}..T+${Math.max(...sent)} ms, took ${Math.min(...took)}..${Math.max(...took)} ms (probe: ${perCancelMs.toFixed(1)} ms/cancel; scheduled ${scheduledBy} ms before T)`);
    expect(violations).toEqual([]);
    expect(won + wonLate + lost).toBe(N);

    // Postgres agrees with what the worker saw.
    const byId = new Map((await client.listRuns({ queue: 'cancel-race', pageSize: 1000 })).runs.map((r) => [r.id, r]));
    const byStatus = new Map<string, number>();
    for (const s of scheduled) {
      const r = byId.get(s.run.id)!;
      byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      const delivered = rec.count(s.run.id);
      if (r.status === 'cancelled') expect(delivered).toBe(0);
      else {
        expect(['fired', 'completed']).toContain(r.status);
        expect(delivered).toBe(1);
        expect(r.firedAtMs).toBeGreaterThanOrEqual(T);
      }
    }
    expect(byStatus.get('cancelled') ?? 0).toBe(won + wonLate);
    // No fire before T.
    for (const s of scheduled) for (const r of rec.byRun.get(s.run.id) ?? []) expect(r.receivedAt).toBeGreaterThanOrEqual(T);
  });
});

describe('RescheduleJob', () => {
  it('far → near: fires at the new time, not before', async () => {
    const { job, run } = await client.schedule({ queue: 'resched', delayMs: HOUR });
    const newDue = Date.now() + 500;
    const moved = await client.rescheduleJob(job.id, { at: newDue });
    expect(moved.id).toBe(run.id);
    expect(moved.dueAtMs).toBe(newDue);
    expect(moved.status).toBe('scheduled');
    expect(await worker!.recorder.waitForAll([run.id], 10_000)).toBe(true);
    const [got] = worker!.recorder.byRun.get(run.id)!;
    expect(got.receivedAt).toBeGreaterThanOrEqual(newDue);
    expect(got.receivedAt - newDue).toBeLessThan(1_000);
    expect(got.run.dueAtMs).toBe(newDue);
    expect(got.run.idempotencyKey).toBe(moved.idempotencyKey);
    await sleep(500);
    expect(worker!.recorder.count(run.id)).toBe(1);
  });

  it('near → far: does not fire at the old time', async () => {
    const { job, run } = await client.schedule({ queue: 'resched', delayMs: 800 });
    const moved = await client.rescheduleJob(job.id, { delayMs: HOUR });
    expect(moved.dueAtMs).toBeGreaterThan(Date.now() + HOUR - 60_000);
    await sleep(800 + 1_500);
    expect(worker!.recorder.has(run.id)).toBe(false);
    const now = await client.getRun(run.id);
    expect(now.status).toBe('scheduled');
    expect(now.dueAtMs).toBe(moved.dueAtMs);
    await client.cancelJob(job.id);
  });

  it('near → later within the window: fires at the new time only', async () => {
    const { job, run } = await client.schedule({ queue: 'resched', delayMs: 600 });
    const newDue = Date.now() + 2_000;
    await client.rescheduleJob(job.id, { at: newDue });
    expect(await worker!.recorder.waitForAll([run.id], 10_000)).toBe(true);
    const [got] = worker!.recorder.byRun.get(run.id)!;
    expect(got.receivedAt).toBeGreaterThanOrEqual(newDue);
    expect(got.run.dueAtMs).toBe(newDue);
    await sleep(500);
    expect(worker!.recorder.count(run.id)).toBe(1);
  });

  it('a job that already fired cannot be rescheduled (FAILED_PRECONDITION)', async () => {
    const { job, run } = await client.schedule({ queue: 'resched', delayMs: 0 });
    expect(await worker!.recorder.waitForAll([run.id], 10_000)).toBe(true);
    const err = await grpcError(client.rescheduleJob(job.id, { delayMs: 1_000 }));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    await sleep(1_500);
    expect(worker!.recorder.count(run.id)).toBe(1);
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});
