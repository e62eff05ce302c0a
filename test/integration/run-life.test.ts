/**
 * The life of a run on the production engine (real Postgres): a checkpoint
 * heartbeated by one attempt reaches the retry and the redelivery; dead
 * letters are listed with every attempt and replayed once; a running run is
 * cancelled over its worker's stream, never redelivered, and ends cancelled;
 * overlap cancel_other stops the running occurrence before the new one starts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, scheduleInput, waitFor, type Delivery } from '../helpers/daemon-parts.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import type { DeliveryIdentity } from '../../daemon/dispatch/delivery-hub.js';
import type { Recurrence } from '../../daemon/recurring/recurrence.js';

let db: TestDatabase;
let parts: DaemonParts | undefined;

beforeAll(async () => {
  db = await createTestDatabase(1);
});
afterEach(async () => {
  await parts?.stop();
  parts = undefined;
});
afterAll(async () => {
  await db?.drop();
});

async function start(): Promise<DaemonParts> {
  parts = new DaemonParts({ db: db.pool, shardCount: 1, windowMs: 3_000, loadIntervalMs: 200 });
  await parts.own([0]);
  return parts;
}

const ref = (d: Delivery) => ({ runId: d.run.id, shard: d.run.shard, fence: d.run.fence, deliveries: d.run.deliveries, sentAtMs: d.atWallMs });

/** A worker stream of its own on one queue that records runs and cancels. */
function stream(p: DaemonParts, queue: string) {
  const runs: FiredRunRow[] = [];
  const cancels: { runId: number; reason: string }[] = [];
  p.engine.hub.register({
    id: 1000 + Math.floor(Math.random() * 1e6),
    workerId: `w-${queue}`,
    queues: new Set([queue]),
    credit: 100,
    send: (run) => runs.push(run),
    cancel: (d: DeliveryIdentity, reason: string) => cancels.push({ runId: d.runId, reason }),
  });
  return { runs, cancels };
}

describe('checkpoints', () => {
  it('the retry of a failed attempt receives its last checkpoint and progress', async () => {
    const p = await start();
    const [s] = await p.scheduling.schedule([scheduleInput(Date.now(), { initialBackoffMs: 50, maxBackoffMs: 50 })]);
    await waitFor(() => p.delivered(s.run.id).length === 1, 5_000, 'first attempt delivered');
    const first = p.delivered(s.run.id)[0];
    expect(first.run.checkpoint).toBeNull();
    await p.engine.answers.heartbeat(ref(first), 0.4, Buffer.from('page=7'), 'w-1');
    const out = await p.engine.answers.fail(ref(first), true, 'boom', 'w-1');
    expect(out.status).toBe('failed');
    await waitFor(() => p.deliveries.some((d) => d.run.id === out.retry!.runId), 5_000, 'retry delivered');
    const retry = p.deliveries.find((d) => d.run.id === out.retry!.runId)!;
    expect(retry.run.attempt).toBe(2);
    expect(retry.run.checkpoint?.toString()).toBe('page=7');
    expect(retry.run.progress).toBeCloseTo(0.4);
  });

  it('a redelivery after the lease ran out carries the checkpoint', async () => {
    const p = await start();
    const [s] = await p.scheduling.schedule([scheduleInput(Date.now(), { leaseMs: 1_000 })]);
    await waitFor(() => p.delivered(s.run.id).length === 1, 5_000, 'delivered');
    await p.engine.answers.heartbeat(ref(p.delivered(s.run.id)[0]), 0.9, Buffer.from('offset=42'), 'w-1');
    p.engine.redeliverNow();
    await waitFor(
      async () => {
        p.engine.redeliverNow();
        return p.delivered(s.run.id).length === 2;
      },
      5_000,
      'redelivered after the lease',
    );
    expect(p.delivered(s.run.id)[1].run.checkpoint?.toString()).toBe('offset=42');
  });
});

describe('dead letters', () => {
  it('a dead run is listed with every attempt and its worker, replayed once as a new run', async () => {
    const p = await start();
    const [s] = await p.scheduling.schedule([scheduleInput(Date.now(), { queue: 'dl', maxAttempts: 2, initialBackoffMs: 20, maxBackoffMs: 20 })]);
    await waitFor(() => p.delivered(s.run.id).length === 1, 5_000, 'attempt 1');
    const a1 = await p.engine.answers.fail(ref(p.delivered(s.run.id)[0]), true, 'timeout talking to bank', 'worker-a');
    await waitFor(() => p.deliveries.some((d) => d.run.id === a1.retry!.runId), 5_000, 'attempt 2');
    const a2 = await p.engine.answers.fail(ref(p.deliveries.find((d) => d.run.id === a1.retry!.runId)!), true, 'bank said NO', 'worker-b');
    expect(a2.status).toBe('dead');

    const all = { queue: 'dl', jobId: null, sinceMs: null, untilMs: null, errorContains: null, after: null, limit: 10 };
    const dead = await p.scheduling.listDeadRuns(all);
    expect(dead.map((r) => r.id)).toEqual([a1.retry!.runId]);
    expect(dead[0]).toMatchObject({ status: 'dead', error: 'bank said NO', worker_id: 'worker-b', attempt: 2 });
    expect(await p.scheduling.listDeadRuns({ ...all, errorContains: 'said no' })).toHaveLength(1);
    expect(await p.scheduling.listDeadRuns({ ...all, errorContains: '100%' })).toHaveLength(0);
    const attempts = await p.scheduling.attempts(dead[0]);
    expect(attempts.map((r) => [r.attempt, r.status, r.error, r.worker_id])).toEqual([
      [1, 'failed', 'timeout talking to bank', 'worker-a'],
      [2, 'dead', 'bank said NO', 'worker-b'],
    ]);
    expect((await p.scheduling.getJob(s.job.id)).job.status).toBe('dead');

    const { replayed, skipped } = await p.scheduling.replayRuns({ ids: [dead[0].id, s.run.id] });
    expect(skipped).toEqual([s.run.id]); // attempt 1 failed (retried): not a dead letter
    expect(replayed).toHaveLength(1);
    await waitFor(() => p.deliveries.some((d) => d.run.id === replayed[0].newRunId), 5_000, 'replay delivered');
    const replay = p.deliveries.find((d) => d.run.id === replayed[0].newRunId)!;
    expect(replay.run).toMatchObject({ origin: 'replay', attempt: 1 });
    expect((await p.scheduling.getRun(replay.run.id)).replay_of).toBe(dead[0].id);
    expect((await p.scheduling.getJob(s.job.id)).job.status).toBe('active');
    expect((await p.scheduling.replayRuns({ ids: [dead[0].id] })).replayed).toHaveLength(0); // never twice
    const [err] = await p.engine.answers.complete([ref(replay)]);
    expect(err).toBeNull();
    expect((await p.scheduling.getJob(s.job.id)).job.status).toBe('completed');
  });
});

describe('cancel while running', () => {
  it('CancelJob tells the worker holding the run; a Fail then ends it cancelled, with no retry', async () => {
    const p = await start();
    const w = stream(p, 'long');
    const [s] = await p.scheduling.schedule([scheduleInput(Date.now(), { queue: 'long' })]);
    await waitFor(() => w.runs.length === 1, 5_000, 'running');
    const out = await p.scheduling.cancelJob(s.job.id, () => undefined);
    expect(out).toMatchObject({ runsCancelled: 0, runsCancelling: 1 });
    expect(out.job.status).toBe('cancelled');
    expect(w.cancels).toEqual([{ runId: s.run.id, reason: 'job cancelled' }]);
    const run = w.runs[0];
    const failed = await p.engine.answers.fail({ runId: run.id, shard: run.shard, fence: run.fence, deliveries: run.deliveries, sentAtMs: null }, true, 'aborted', 'w-long');
    expect(failed).toEqual({ status: 'cancelled', retry: null });
    expect((await p.scheduling.getRun(s.run.id)).status).toBe('cancelled');
  });

  it('a cancelled run whose worker never answers is not redelivered: it ends cancelled at its lease', async () => {
    const p = await start();
    const w = stream(p, 'silent');
    const [s] = await p.scheduling.schedule([scheduleInput(Date.now(), { queue: 'silent', leaseMs: 1_000 })]);
    await waitFor(() => w.runs.length === 1, 5_000, 'running');
    await p.scheduling.cancelJob(s.job.id, () => undefined);
    await waitFor(
      async () => {
        p.engine.redeliverNow();
        return (await p.scheduling.getRun(s.run.id)).status === 'cancelled';
      },
      5_000,
      'ended cancelled',
    );
    expect(w.runs).toHaveLength(1);
  });
});

/** Every 600 ms, overlap cancel_other. */
const cancelOtherEvery600ms: Recurrence = {
  cadence: { kind: 'interval', everyMs: 600, phaseMs: 0 },
  startAtMs: null,
  endAtMs: null,
  jitterMs: 0,
  limit: null,
  overlap: 'cancel_other',
  catchUp: { windowMs: 300_000, mode: 'fire_all', maxRuns: 100 },
  pauseOnFailure: false,
};

describe('overlap cancel_other', () => {
  it('a new occurrence stops the running one, then starts', async () => {
    const p = await start();
    const w = stream(p, 'co');
    const rule = cancelOtherEvery600ms;
    await p.recurring.schedule([{ ...scheduleInput(0, { queue: 'co' }), recurrence: rule }]);
    await waitFor(() => w.runs.length === 1, 5_000, 'first running');
    const first = w.runs[0];
    await waitFor(() => w.cancels.some((c) => c.runId === first.id), 5_000, 'asked to stop at the next occurrence');
    expect(w.runs).toHaveLength(1); // the new one waits for the old one to stop
    await p.engine.answers.fail({ runId: first.id, shard: first.shard, fence: first.fence, deliveries: first.deliveries, sentAtMs: null }, false, 'aborted');
    await waitFor(() => w.runs.length === 2, 5_000, 'the newer occurrence started');
    expect(w.runs[1].nominal_at_ms!).toBeGreaterThan(first.nominal_at_ms!);
    expect((await p.scheduling.getRun(first.id)).status).toBe('cancelled');
  });
});

describe('overlap cancel_other and a retry', () => {
  it('a new occurrence cancels the older one waiting for its retry, and starts (before: it waited out the backoff)', async () => {
    const p = await start();
    const w = stream(p, 'co-retry');
    const rule = cancelOtherEvery600ms;
    // Backoff is full jitter (random up to the cap): an hour's cap, and the retry pushed a day out below, so it never fires here.
    const [job] = await p.recurring.schedule([{ ...scheduleInput(0, { queue: 'co-retry', maxAttempts: 3, initialBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 }), recurrence: rule }]);
    await waitFor(() => w.runs.length === 1, 5_000, 'first running');
    const first = w.runs[0];
    // It fails retryably: its second attempt waits, and counts as running meanwhile.
    const out = await p.engine.answers.fail({ runId: first.id, shard: first.shard, fence: first.fence, deliveries: first.deliveries, sentAtMs: null }, true, 'flaky');
    expect(out.retry).not.toBeNull();
    await db.pool.query(`UPDATE runs SET due_at = now() + interval '1 day' WHERE id = $1 AND status = 'scheduled'`, [out.retry!.runId]);
    await waitFor(() => w.runs.length === 2, 5_000, 'the newer occurrence started');
    expect(w.runs[1].nominal_at_ms!).toBeGreaterThan(first.nominal_at_ms!);
    expect(w.runs[1].job_id).toBe(job.job.id);
    expect((await p.scheduling.getRun(out.retry!.runId)).status).toBe('cancelled');
  });
});

describe('priorities', () => {
  it('when more runs are due than worker credit takes, higher priority goes first and equal priority keeps due order', async () => {
    const p = await start();
    const w = { runs: [] as FiredRunRow[] };
    const credit = 2;
    const inFlight = new Set<number>();
    p.engine.hub.register({
      id: 4242,
      workerId: 'slow',
      queues: new Set(['prio']),
      credit,
      send: (run) => {
        w.runs.push(run);
        inFlight.add(run.id);
      },
    });
    const due = Date.now() + 400;
    // 40 runs due at 4 instants 5 ms apart, priorities mixed; the slow worker takes 2 at a time.
    const inputs = Array.from({ length: 40 }, (_, i) => scheduleInput(due + (i % 4) * 5, { queue: 'prio', priority: [0, 10, -5, 3][(i * 7) % 4] }));
    const made = await p.scheduling.schedule(inputs);
    const byId = new Map(made.map((s, i) => [s.run.id, inputs[i]]));
    await waitFor(() => w.runs.length === credit, 5_000, 'credit used');
    // The runs past the credit are claimed and parked (not handed out) before the first completion.
    await waitFor(() => p.engine.hub.backlog === 40 - credit, 5_000, `${40 - credit} runs parked for credit`);
    expect(w.runs).toHaveLength(credit);
    // Complete one at a time: each completion frees one credit.
    while (w.runs.length < 40) {
      const n = w.runs.length;
      const run = w.runs.find((r) => inFlight.has(r.id))!;
      inFlight.delete(run.id);
      p.engine.hub.settle(4242, run.id);
      await waitFor(() => w.runs.length > n, 2_000, 'next run handed out');
    }
    // After the first `credit` (handed out as they came due), the parked ones left best first.
    const parked = w.runs.slice(credit).map((r) => ({ priority: r.priority, due: r.due_at_ms, id: r.id }));
    const sorted = [...parked].sort((a, b) => b.priority - a.priority || a.due - b.due || a.id - b.id);
    expect(parked).toEqual(sorted);
    expect(new Set(parked.map((r) => byId.get(r.id)!.priority))).toEqual(new Set([0, 10, -5, 3]));
  });
});
