/**
 * Worker answers (Complete, Fail, Heartbeat) and the redelivery reaper's
 * statement, against real rows. An answer names one delivery (run id +
 * fence + deliveries); for a superseded delivery it is refused with
 * failed_precondition and changes nothing. Retries are new run rows with the
 * same idempotency key, due after the backoff; out of attempts or not
 * retryable means dead, job included.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Answers, type AnsweredDelivery, type CompletedDelivery, type FailOutcome } from '../../daemon/dispatch/answers.js';
import { RunRouter } from '../../daemon/engine/router.js';
import { StepTransitions } from '../../daemon/workflows/step-transitions.js';
import { REDELIVER_EXPIRED } from '../../daemon/db/queries/dispatch.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { TimelaneError } from '../../daemon/errors.js';
import { clientConfig } from '../../daemon/db/pool.js';
import { channelFor, decodeNearDue } from '../../daemon/slow/notifications.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { claimDirect, insertRuns, type InsertOptions } from '../helpers/daemon-parts.js';

/** Shards 0-1: answer tests. Shards 2-3: the reaper test (its statement scans whole shards). */
const ANSWER_SHARD = 0;
const REAP_SHARD = 2;
const STALE_SHARD = 3;

let db: TestDatabase;
let answers: Answers;

beforeAll(async () => {
  db = await createTestDatabase(4);
  // Owns no shard: a retry is announced by notify inside the Fail transaction.
  answers = new Answers(db.pool, new RunRouter({ schema: 'timelane', windowMs: 30_000, wallNow: Date.now, owns: () => false, offerLocal: () => undefined, cancelLocal: () => undefined }));
});
afterAll(async () => {
  await db?.drop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Moves the shard's fence forward (a new owner) and returns it. */
async function bumpFence(shard: number): Promise<number> {
  const { rows } = await db.pool.query<{ fence: number }>(`UPDATE shards SET fence = fence + 1, owner = 'tester' WHERE shard = $1 RETURNING fence`, [shard]);
  return rows[0].fence;
}

async function currentFence(shard: number): Promise<number> {
  const { rows } = await db.pool.query<{ fence: number }>('SELECT fence FROM shards WHERE shard = $1', [shard]);
  return rows[0].fence;
}

/** A run inserted due now and claimed under the shard's current fence (taking one if none yet). */
async function firedRun(o: InsertOptions & { shard?: number } = {}): Promise<FiredRunRow> {
  const shard = o.shard ?? ANSWER_SHARD;
  let fence = await currentFence(shard);
  if (fence === 0) fence = await bumpFence(shard);
  const [run] = await insertRuns(db.pool, shard, [Date.now() - 5], o);
  const claimed = await claimDirect(db.pool, [run.id], shard, fence);
  expect(claimed).toHaveLength(1);
  return claimed[0];
}

/** A delivery as an answer names it; without a shard (an older client) the daemon looks it up. */
type Ref = Omit<AnsweredDelivery, 'shard' | 'sentAtMs'> & Partial<Pick<AnsweredDelivery, 'shard' | 'sentAtMs'>>;
const refOf = (r: { id: number; fence: number; deliveries: number; shard?: number }): Ref => ({ runId: r.id, fence: r.fence, deliveries: r.deliveries, shard: r.shard });
const full = (d: Ref): AnsweredDelivery => ({ ...d, shard: d.shard ?? null, sentAtMs: d.sentAtMs ?? null });

async function completeRun(_db: unknown, d: Ref): Promise<void> {
  const [err] = await answers.complete([full(d)]);
  if (err) throw err;
}
const failRun = (_db: unknown, d: Ref, retryable: boolean, message: string): Promise<FailOutcome> => answers.fail(full(d), retryable, message);
const heartbeatRun = (_db: unknown, d: Ref, progress: number | null, checkpoint: Buffer | null): Promise<number | null> =>
  answers.heartbeat(full(d), progress, checkpoint);

interface FullRun {
  id: number;
  job_id: string;
  attempt: number;
  status: string;
  fence: number;
  deliveries: number;
  idempotency_key: string;
  error: string | null;
  progress: number | null;
  checkpoint: Buffer | null;
  due_at_ms: number;
  finished_at_ms: number | null;
  lease_expires_at_ms: number | null;
  job_status: string;
}

async function runsOfJob(jobId: string): Promise<FullRun[]> {
  const { rows } = await db.pool.query<FullRun>(
    `SELECT r.id, r.job_id, r.attempt, r.status, r.fence, r.deliveries, r.idempotency_key, r.error, r.progress, r.checkpoint,
       (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms,
       (extract(epoch FROM r.finished_at) * 1000)::int8 AS finished_at_ms,
       (extract(epoch FROM r.lease_expires_at) * 1000)::int8 AS lease_expires_at_ms,
       j.status AS job_status
     FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.job_id = $1 ORDER BY r.attempt, r.id`,
    [jobId],
  );
  return rows;
}

async function runById(id: number): Promise<FullRun> {
  const { rows } = await db.pool.query<{ job_id: string }>('SELECT job_id FROM runs WHERE id = $1', [id]);
  const all = await runsOfJob(rows[0].job_id);
  return all.find((r) => r.id === id) as FullRun;
}

/** Awaits a promise expected to reject with a TimelaneError of `kind`; returns its message. */
async function refused(p: Promise<unknown>, kind: TimelaneError['kind']): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TimelaneError);
  expect((err as TimelaneError).kind).toBe(kind);
  return (err as TimelaneError).message;
}

/** Lets the run's lease run out now. */
async function expireLease(runId: number): Promise<void> {
  await db.pool.query(`UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [runId]);
}

async function redeliver(shards: number[], fences: number[], limit = 100): Promise<FiredRunRow[]> {
  const { rows } = await db.pool.query<FiredRunRow>(REDELIVER_EXPIRED, [limit, shards, fences, []]);
  return rows;
}

describe('complete', () => {
  it('records the hand-off time it is given as fired_at; without one (answered on another stream), the release time greatest(claimed_at, due_at)', async () => {
    const known = await firedRun();
    await completeRun(db.pool, { ...refOf(known), sentAtMs: known.due_at_ms + 7 });
    const unknown = await firedRun();
    await completeRun(db.pool, refOf(unknown));
    const { rows } = await db.pool.query<{ id: number; fired: number; release: number; lag_ms: number }>(
      `SELECT id, (extract(epoch FROM fired_at) * 1000)::int8 AS fired, (extract(epoch FROM greatest(claimed_at, due_at)) * 1000)::int8 AS release, lag_ms
         FROM runs WHERE id = ANY($1::int8[]) ORDER BY id`,
      [[known.id, unknown.id]],
    );
    expect(rows[0]).toMatchObject({ fired: known.due_at_ms + 7, lag_ms: 7 });
    expect(rows[1].fired).toBe(rows[1].release);
    expect(rows[1].lag_ms).toBeGreaterThanOrEqual(0);
  });

  it('with the right delivery: run completed, job completed, lease cleared', async () => {
    const run = await firedRun();
    expect(run.lease_expires_at_ms).not.toBeNull();
    await completeRun(db.pool, refOf(run));
    const [after] = await runsOfJob(run.job_id);
    expect(after).toMatchObject({ status: 'completed', job_status: 'completed', lease_expires_at_ms: null });
    expect(after.finished_at_ms).not.toBeNull();
    // A second answer for the same delivery changes nothing and says why.
    expect(await refused(completeRun(db.pool, refOf(run)), 'failed_precondition')).toMatch(/completed/);
  });

  it('with a stale fence or an old delivery number: failed_precondition, and nothing changes', async () => {
    const run = await firedRun();
    expect(await refused(completeRun(db.pool, { ...refOf(run), fence: run.fence - 1 }), 'failed_precondition')).toMatch(/superseded/);
    expect(await runById(run.id)).toMatchObject({ status: 'fired', deliveries: 1, job_status: 'active' });

    // Redelivered (lease ran out): delivery 1 is superseded by delivery 2.
    await expireLease(run.id);
    const again = (await redeliver([ANSWER_SHARD], [run.fence])).find((r) => r.id === run.id) as FiredRunRow;
    expect(again.deliveries).toBe(2);
    expect(await refused(completeRun(db.pool, refOf(run)), 'failed_precondition')).toMatch(/delivery 2/);
    expect(await runById(run.id)).toMatchObject({ status: 'fired', deliveries: 2, job_status: 'active' });
    await completeRun(db.pool, refOf(again));
    expect(await runById(run.id)).toMatchObject({ status: 'completed', job_status: 'completed' });
  });

  it('an unknown run is not_found', async () => {
    await refused(completeRun(db.pool, { runId: 9_999_999, fence: 1, deliveries: 1 }), 'not_found');
  });

  it('an at-most-once run has no lease and completes like any other', async () => {
    const run = await firedRun({ delivery: 'at_most_once' });
    expect(run.lease_expires_at_ms).toBeNull();
    expect(run.delivery).toBe('at_most_once');
    await completeRun(db.pool, refOf(run));
    expect(await runById(run.id)).toMatchObject({ status: 'completed', job_status: 'completed' });
  });

  it('a batch whose workflow-step part fails still acknowledges the Completes it wrote: only the others get the error', async () => {
    // Deliveries COMPLETE_RUNS did not match go on to the workflow path; here it fails (Postgres away, say).
    const router = new RunRouter({ schema: 'timelane', windowMs: 30_000, wallNow: Date.now, owns: () => false, offerLocal: () => undefined, cancelLocal: () => undefined });
    const steps = new StepTransitions(router);
    vi.spyOn(steps, 'complete').mockRejectedValue(new TimelaneError('unavailable', 'postgres went away'));
    const withFailingSteps = new Answers(db.pool, router, steps);
    const [written, superseded] = [await firedRun(), await firedRun()];
    const outcomes = await withFailingSteps.complete([full(refOf(written)), full({ ...refOf(superseded), deliveries: superseded.deliveries + 1 })]);
    // Before: the whole batch failed, so the worker was told a committed Complete had not been written.
    expect(outcomes.map((e) => e?.message ?? null)).toEqual([null, 'postgres went away']);
    expect(await runById(written.id)).toMatchObject({ status: 'completed' });
    expect(await runById(superseded.id)).toMatchObject({ status: 'fired' });
  });

  /**
   * Answers whose workflow path fails as a lock wait would: once `release` is
   * called (at once without `held`), with a lock timeout. With `succeeds`, it
   * completes every delivery it is given instead (without touching a row).
   */
  function answersWithLockedSteps(held = false, succeeds = false): { answers: Answers; release: () => void; calls: () => number } {
    const router = new RunRouter({ schema: 'timelane', windowMs: 30_000, wallNow: Date.now, owns: () => false, offerLocal: () => undefined, cancelLocal: () => undefined });
    const steps = new StepTransitions(router);
    let release = (): void => undefined;
    const lockHeld = held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
    const spy = vi.spyOn(steps, 'complete').mockImplementation(async (_tx, ds) => {
      await lockHeld;
      if (succeeds) return { done: ds.map((d) => ({ id: d.runId, fence: d.fence, deliveries: d.deliveries })), afterCommit: () => undefined };
      throw new TimelaneError('unavailable', LOCKED, { cause: { code: '55P03' } });
    });
    return { answers: new Answers(db.pool, router, steps), release, calls: () => spy.mock.calls.length };
  }
  const LOCKED = 'a lock it needs is held by another transaction';
  /** A fired run marked as a workflow step's (COMPLETE_RUNS leaves it alone); the workflow path itself is stubbed here. */
  async function stepRun(): Promise<FiredRunRow> {
    const run = await firedRun();
    await db.pool.query("UPDATE runs SET origin = 'workflow' WHERE id = $1", [run.id]);
    return run;
  }
  const stepRef = (r: FiredRunRow): CompletedDelivery => ({ ...full(refOf(r)), step: true });

  it("a step's Complete waiting for its workflow run's lock holds back no other Complete, even one sent in the same moment", async () => {
    const { answers: a, release } = answersWithLockedSteps(true);
    const [step, plain, later] = [await firedRun(), await firedRun(), await firedRun()];
    const stepDone = a.complete([stepRef(step)]);
    // Same tick: before, both went into one batch, and the plain one was answered only once the step's wait ended.
    const plainDone = a.complete([full(refOf(plain))]);
    const heldBack = sleep(2_000).then(() => 'held back');
    expect(await Promise.race([plainDone, heldBack])).toEqual([null]);
    expect(await Promise.race([a.complete([full(refOf(later))]), heldBack])).toEqual([null]);
    expect(await runById(plain.id)).toMatchObject({ status: 'completed' });
    expect(await runById(later.id)).toMatchObject({ status: 'completed' });
    release();
    expect((await stepDone).map((e) => e?.message ?? null)).toEqual([LOCKED]);
    expect(await runById(step.id)).toMatchObject({ status: 'fired' });
  });

  it("a step's Complete sent again (no longer known as a step's) holds back no other Complete either", async () => {
    const { answers: a, release, calls } = answersWithLockedSteps(true);
    const [step, plain] = [await stepRun(), await firedRun()];
    // The worker's second send: the hub forgot the delivery with the first, so it comes without `step`.
    const again = a.complete([full(refOf(step))]);
    const plainDone = a.complete([full(refOf(plain))]);
    const heldBack = sleep(2_000).then(() => 'held back');
    expect(await Promise.race([plainDone, heldBack])).toEqual([null]);
    await vi.waitFor(() => expect(calls()).toBe(1)); // it did go on to the workflow path
    release();
    expect((await again).map((e) => e?.message ?? null)).toEqual([LOCKED]);
  });

  it('outcomes come back in the order sent, steps among others', async () => {
    const { answers: a } = answersWithLockedSteps();
    const [first, step, last] = [await firedRun(), await stepRun(), await firedRun()];
    const out = await a.complete([full(refOf(first)), stepRef(step), full(refOf(last))]);
    expect(out.map((e) => e?.message ?? null)).toEqual([null, LOCKED, null]);
    expect(await runById(first.id)).toMatchObject({ status: 'completed' });
    expect(await runById(last.id)).toMatchObject({ status: 'completed' });
  });

  it("copies of a step's delivery in one answer (only the first known as a step's) are written in one transaction, and share its outcome", async () => {
    const { answers: a, calls } = answersWithLockedSteps(false, true);
    const step = await stepRun();
    // Before, the copy went the plain way and on to a second transaction (with a real workflow path: refused, the run already completed).
    expect(await a.complete([stepRef(step), full(refOf(step))])).toEqual([null, null]);
    expect(calls()).toBe(1);
  });
});

describe('fail', () => {
  it('retryable: a new run, attempt 2, same idempotency key, due after the backoff; the job stays active', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const run = await firedRun({ maxAttempts: 3, initialBackoffMs: 200, maxBackoffMs: 10_000, priority: 4 });
    const before = Date.now();
    const out = await failRun(db.pool, refOf(run), true, 'boom');
    expect(out.status).toBe('failed');
    const runs = await runsOfJob(run.job_id);
    expect(runs.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'scheduled'],
    ]);
    const [failed, retry] = runs;
    expect(failed.error).toBe('boom');
    expect(failed.lease_expires_at_ms).toBeNull();
    expect(retry.idempotency_key).toBe(failed.idempotency_key);
    expect(retry.job_status).toBe('active');
    // backoff = floor(200 * 2^0 * 0.999) = 199 ms after the failure (same statement, same now()).
    expect(retry.due_at_ms - (failed.finished_at_ms as number)).toBeGreaterThanOrEqual(198);
    expect(retry.due_at_ms - (failed.finished_at_ms as number)).toBeLessThanOrEqual(200);
    expect(retry.due_at_ms).toBeGreaterThanOrEqual(before + 150);
    expect(out.retry).toEqual({ runId: retry.id, shard: ANSWER_SHARD, dueAtMs: retry.due_at_ms, priority: 4 });
    // The failed delivery cannot be answered again.
    await refused(completeRun(db.pool, refOf(run)), 'failed_precondition');
  });

  it('the retry is announced inside the Fail transaction: a listener hears it once the retry row is visible', async () => {
    const listener = new pg.Client(clientConfig(db.opts));
    await listener.connect();
    const heard: { runIds: number[]; visible: string | undefined }[] = [];
    listener.on('notification', (msg) => {
      const runIds = decodeNearDue(msg.payload ?? '').map((r) => r.runId);
      // Checked at once: the notification must never arrive before the row commits.
      void db.pool.query<{ status: string }>('SELECT status FROM runs WHERE id = ANY($1::int8[])', [runIds]).then(({ rows }) => heard.push({ runIds, visible: rows[0]?.status }));
    });
    await listener.query(`LISTEN ${channelFor('timelane')}`);
    try {
      const run = await firedRun({ maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 100 });
      const out = await failRun(db.pool, refOf(run), true, 'boom');
      expect(out.retry).not.toBeNull();
      await vi.waitFor(() => expect(heard).toEqual([{ runIds: [out.retry!.runId], visible: 'scheduled' }]), { timeout: 2_000 });
    } finally {
      await listener.end();
    }
  });

  it('a Fail whose retry cannot be announced changes nothing: the run stays fired, no retry row, the error is true', async () => {
    // A channel name over Postgres's 63-byte limit: pg_notify raises. Inside the
    // transaction that rolls the Fail back; after a commit it would leave a failed
    // run and a retry behind an error answer (the worker would retry a Fail that took).
    const badRouter = new RunRouter({ schema: 'x'.repeat(64), windowMs: 30_000, wallNow: Date.now, owns: () => false, offerLocal: () => undefined, cancelLocal: () => undefined });
    const unannounced = new Answers(db.pool, badRouter);
    const run = await firedRun({ maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 100 });
    await expect(unannounced.fail(full(refOf(run)), true, 'boom')).rejects.toThrow();
    const runs = await runsOfJob(run.job_id);
    expect(runs.map((r) => [r.attempt, r.status, r.error])).toEqual([[1, 'fired', null]]);
    // The worker's retried Fail (on a healthy daemon) then takes, once.
    const out = await failRun(db.pool, refOf(run), true, 'boom');
    expect(out.status).toBe('failed');
    expect((await runsOfJob(run.job_id)).map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'scheduled'],
    ]);
  });

  it('backoff doubles per attempt and is capped; the last attempt goes dead with the job', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const first = await firedRun({ maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 150 });
    const out1 = await failRun(db.pool, refOf(first), true, 'one');
    expect(out1.status).toBe('failed');
    const r2 = out1.retry as NonNullable<typeof out1.retry>;
    const [second] = await claimDirect(db.pool, [r2.runId], ANSWER_SHARD, first.fence, r2.dueAtMs);
    expect(second.attempt).toBe(2);
    const out2 = await failRun(db.pool, refOf(second), true, 'two');
    expect(out2.status).toBe('failed');
    const r3 = out2.retry as NonNullable<typeof out2.retry>;
    const [third] = await claimDirect(db.pool, [r3.runId], ANSWER_SHARD, first.fence, r3.dueAtMs);
    expect(third.attempt).toBe(3);
    const out3 = await failRun(db.pool, refOf(third), true, 'three');
    expect(out3).toEqual({ status: 'dead', retry: null });

    const runs = await runsOfJob(first.job_id);
    expect(runs.map((r) => [r.attempt, r.status, r.error])).toEqual([
      [1, 'failed', 'one'],
      [2, 'failed', 'two'],
      [3, 'dead', 'three'],
    ]);
    expect(runs.every((r) => r.job_status === 'dead')).toBe(true);
    expect(new Set(runs.map((r) => r.idempotency_key)).size).toBe(1);
    // attempt 1 waited floor(100 * 0.999) = 99; attempt 2 floor(min(150, 200) * 0.999) = 149 (capped).
    expect(runs[1].due_at_ms - (runs[0].finished_at_ms as number)).toBeGreaterThanOrEqual(98);
    expect(runs[1].due_at_ms - (runs[0].finished_at_ms as number)).toBeLessThanOrEqual(100);
    expect(runs[2].due_at_ms - (runs[1].finished_at_ms as number)).toBeGreaterThanOrEqual(148);
    expect(runs[2].due_at_ms - (runs[1].finished_at_ms as number)).toBeLessThanOrEqual(150);
  });

  it('non-retryable: the run and the job go dead, no retry', async () => {
    const run = await firedRun({ maxAttempts: 5 });
    const out = await failRun(db.pool, refOf(run), false, 'fatal');
    expect(out).toEqual({ status: 'dead', retry: null });
    const runs = await runsOfJob(run.job_id);
    expect(runs.map((r) => [r.attempt, r.status, r.error, r.job_status])).toEqual([[1, 'dead', 'fatal', 'dead']]);
  });

  it('max attempts 1: a retryable failure is already out of attempts', async () => {
    const run = await firedRun({ maxAttempts: 1 });
    expect(await failRun(db.pool, refOf(run), true, 'x')).toEqual({ status: 'dead', retry: null });
    expect((await runsOfJob(run.job_id)).map((r) => [r.status, r.job_status])).toEqual([['dead', 'dead']]);
  });

  it('for a superseded delivery: failed_precondition, no retry row, the run untouched', async () => {
    const run = await firedRun({ maxAttempts: 3 });
    await refused(failRun(db.pool, { ...refOf(run), deliveries: 2 }, true, 'late'), 'failed_precondition');
    await refused(failRun(db.pool, { ...refOf(run), fence: run.fence + 1 }, false, 'late'), 'failed_precondition');
    const runs = await runsOfJob(run.job_id);
    expect(runs.map((r) => [r.attempt, r.status, r.error, r.job_status])).toEqual([[1, 'fired', null, 'active']]);
  });

  it('for an unknown run: not_found', async () => {
    await refused(failRun(db.pool, { runId: 9_999_998, fence: 1, deliveries: 1 }, true, 'x'), 'not_found');
  });
});

describe('heartbeat', () => {
  it('extends the lease from now, records progress, keeps the last checkpoint', async () => {
    const run = await firedRun({ leaseMs: 5_000 });
    const first = run.lease_expires_at_ms as number;
    await sleep(300);
    const extended = await heartbeatRun(db.pool, refOf(run), 0.25, Buffer.from('cp-1'));
    expect(extended).not.toBeNull();
    expect(extended as number).toBeGreaterThanOrEqual(first + 250);
    expect(extended as number).toBeGreaterThanOrEqual(Date.now() + 4_500);
    let row = await runById(run.id);
    expect(row.lease_expires_at_ms).toBe(extended);
    expect(row.progress).toBe(0.25);
    expect(row.checkpoint?.toString()).toBe('cp-1');

    await heartbeatRun(db.pool, refOf(run), 0.5, null);
    row = await runById(run.id);
    expect(row.progress).toBe(0.5);
    expect(row.checkpoint?.toString()).toBe('cp-1');
    expect(row.status).toBe('fired');
  });

  it('for a superseded delivery: failed_precondition, lease unchanged', async () => {
    const run = await firedRun({ leaseMs: 5_000 });
    await refused(heartbeatRun(db.pool, { ...refOf(run), deliveries: 0 }, 0.1, null), 'failed_precondition');
    await refused(heartbeatRun(db.pool, { ...refOf(run), fence: run.fence + 7 }, 0.1, null), 'failed_precondition');
    const row = await runById(run.id);
    expect(row.lease_expires_at_ms).toBe(run.lease_expires_at_ms);
    expect(row.progress).toBeNull();
  });

  it('an at-most-once delivery has no lease to extend', async () => {
    const run = await firedRun({ delivery: 'at_most_once' });
    expect(await heartbeatRun(db.pool, refOf(run), 0.9, null)).toBeNull();
    expect((await runById(run.id)).lease_expires_at_ms).toBeNull();
  });
});

describe('redelivery of expired leases (REDELIVER_EXPIRED)', () => {
  it('picks up expired at-least-once leases of shards whose fence matches, bumps deliveries and takes the fence', async () => {
    const fence = await bumpFence(REAP_SHARD);
    const expired = await firedRun({ shard: REAP_SHARD, leaseMs: 10_000 });
    const live = await firedRun({ shard: REAP_SHARD, leaseMs: 10_000 });
    const mostOnce = await firedRun({ shard: REAP_SHARD, delivery: 'at_most_once' });
    const done = await firedRun({ shard: REAP_SHARD });
    await completeRun(db.pool, refOf(done));
    // A shard we believe we own, but Postgres has moved on.
    const staleFence = await bumpFence(STALE_SHARD);
    const elsewhere = await firedRun({ shard: STALE_SHARD });
    await bumpFence(STALE_SHARD);
    await expireLease(expired.id);
    await expireLease(elsewhere.id);

    const before = Date.now();
    const got = await redeliver([REAP_SHARD, STALE_SHARD], [fence, staleFence]);
    expect(got.map((r) => r.id)).toEqual([expired.id]);
    expect(got[0]).toMatchObject({ fence, deliveries: 2, attempt: 1 });
    expect(await runById(expired.id)).toMatchObject({ status: 'fired', deliveries: 2 });
    expect(got[0].lease_expires_at_ms as number).toBeGreaterThanOrEqual(before + 9_000);
    expect(got[0].payload).toBeInstanceOf(Buffer);

    expect(await runById(live.id)).toMatchObject({ deliveries: 1, status: 'fired' });
    expect(await runById(mostOnce.id)).toMatchObject({ deliveries: 1, status: 'fired', lease_expires_at_ms: null });
    expect(await runById(done.id)).toMatchObject({ deliveries: 1, status: 'completed' });
    const stale = await runById(elsewhere.id);
    expect(stale).toMatchObject({ deliveries: 1, status: 'fired' });
    expect(stale.lease_expires_at_ms as number).toBeLessThan(Date.now());

    // Its lease is fresh now: a second pass finds nothing.
    expect(await redeliver([REAP_SHARD, STALE_SHARD], [fence, staleFence])).toEqual([]);
  });

  it('a redelivery under a newer owner takes the new fence: the old delivery can no longer answer', async () => {
    const oldFence = await currentFence(REAP_SHARD);
    const run = await firedRun({ shard: REAP_SHARD });
    expect(run.fence).toBe(oldFence);
    const newFence = await bumpFence(REAP_SHARD);
    await expireLease(run.id);
    // The old owner's reaper gets nothing; the new owner's gets the run.
    expect(await redeliver([REAP_SHARD], [oldFence])).toEqual([]);
    const [again] = await redeliver([REAP_SHARD], [newFence]);
    expect(again).toMatchObject({ id: run.id, fence: newFence, deliveries: 2, idempotency_key: run.idempotency_key });
    await refused(completeRun(db.pool, refOf(run)), 'failed_precondition');
    await refused(heartbeatRun(db.pool, refOf(run), 0.5, null), 'failed_precondition');
    await completeRun(db.pool, refOf(again));
    expect(await runById(run.id)).toMatchObject({ status: 'completed', job_status: 'completed' });
  });

  it('honours its limit, oldest lease first', async () => {
    const fence = await currentFence(REAP_SHARD);
    const runs = [await firedRun({ shard: REAP_SHARD }), await firedRun({ shard: REAP_SHARD }), await firedRun({ shard: REAP_SHARD })];
    for (const [i, r] of runs.entries()) {
      await db.pool.query(`UPDATE runs SET lease_expires_at = now() - ($2::int * interval '1 second') WHERE id = $1`, [r.id, 10 - i]);
    }
    const first = await redeliver([REAP_SHARD], [fence], 2);
    expect(first.map((r) => r.id).sort((a, b) => a - b)).toEqual([runs[0].id, runs[1].id]);
    const rest = await redeliver([REAP_SHARD], [fence], 2);
    expect(rest.map((r) => r.id)).toEqual([runs[2].id]);
  });
});
