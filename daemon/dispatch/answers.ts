/**
 * Worker answers: Complete, Fail, Heartbeat — and the daemon's own records of
 * a hand-off (an unanswered delivery's `fired_at`, a closed stream's expired
 * deliveries). Each write is one conditional statement on the delivery's
 * identity (run id + shard + fence + deliveries), so an answer for a
 * superseded delivery — redelivered, or re-claimed under a newer fence —
 * changes nothing and is refused with FAILED_PRECONDITION.
 *
 * Completes are batched (one statement per batch). A Fail and the retry it
 * creates commit in one transaction, and the retry is routed inside it: the
 * owner of its shard is told on commit, never after (a lost notify would
 * leave it to the repair scan), and never of a retry that rolled back.
 *
 * Runs of workflow steps (origin 'workflow') take the workflow path: their
 * Complete (with its output) and their final Fail commit in one transaction
 * with the step's transition and the start of the children it made ready
 * (daemon/workflows/step-transitions.ts). Those Completes are batched
 * apart from the others (a step's transaction may wait for its workflow
 * run's lock, and must hold back no other Complete): a Complete of a run
 * this daemon handed out as a step goes there at once; other Completes go
 * through COMPLETE_RUNS (which leaves step runs alone), and only the
 * deliveries it did not match go on to the workflow path (then, if still
 * unmatched, are refused). A replayed step run (origin 'replay') is an
 * ordinary run.
 */
import type { Db, Queryable } from '../db/pool.js';
import { query, queryPrepared, transaction } from '../db/pool.js';
import {
  COMPLETE_LOCKED,
  COMPLETE_RUNS,
  DESCRIBE_DELIVERY,
  EXPIRE_DELIVERIES,
  FAIL_RUN,
  HAND_OFFS_LOCKED,
  HEARTBEAT_RUN,
  RECORD_HAND_OFFS,
  SELECT_RETRY_POLICY,
  SHARDS_OF_RUNS,
} from '../db/queries/dispatch.js';
import { TimelaneError, failedPrecondition, notFound, unavailable } from '../errors.js';
import { isLockTimeout } from '../db/storage-errors.js';
import type { Logger } from '../log.js';
import { backoffMs } from './backoff.js';
import { CompleteBatcher, WRITE_AGAIN } from './complete-batcher.js';
import { PAUSE_ON_FAILURE, WITHDRAW_OCCURRENCES } from '../db/queries/recurring.js';
import type { HandOff, KnownHandOff, RunRef } from '../run-ref.js';
import { StepTransitions, type StepRouting } from '../workflows/step-transitions.js';
import { nullablePlainArray, plainArray } from '../scheduling/pg-arrays.js';

/**
 * COMPLETE_RUNS, the statement every fired run ends with, runs as this
 * prepared statement: Postgres soon stops planning it. It runs on the
 * engine's complete pool, which is keyedOnly (db/pool.ts): that keeps its
 * generic plan to lookups by id. (The answer pool is not: with those planner
 * settings its workflow statements ran a fifth slower, bench/README.md.)
 */
export const COMPLETE_RUNS_STATEMENT = 'tl_complete_runs';

/**
 * Where a retry goes: the engine's router (daemon/engine/router.ts), told
 * inside the Fail's transaction; what it returns runs after the commit. The
 * steps a step's answer starts go there too (StepRouting).
 */
export type RetryRouting = StepRouting;

/** An answer's delivery, with the hand-off time when this daemon made it. */
export type AnsweredDelivery = HandOff;

/** A Complete: its delivery, and the output it carries (kept only for workflow steps). */
export interface CompletedDelivery extends AnsweredDelivery {
  output?: Buffer | null;
  /** This daemon handed it out as a workflow step's run: the workflow path at once, without COMPLETE_RUNS first. */
  step?: boolean;
}

/** A delivery this daemon handed out (or claimed and never sent: sentAtMs null). */
export type HandedOut = KnownHandOff;

export interface FailOutcome {
  /** failed: a retry follows; dead: none; cancelled: its worker had been asked to stop it. */
  status: 'failed' | 'dead' | 'cancelled';
  retry: RunRef | null;
}

export class Answers {
  private readonly completes: CompleteBatcher<CompletedDelivery>;
  /**
   * Completes that take the workflow path, batched apart: those of runs this
   * daemon handed out as steps, and those COMPLETE_RUNS did not match and
   * found unlocked (a step's Complete sent again, or a superseded delivery,
   * refused from here). A step's transaction waits for its workflow run's
   * lock (up to the answer pool's 1 s bound), and in the plain batcher it held
   * every Complete batched or queued behind it (CompleteBatcher writes two
   * batches at most; so do these: two of their transactions at a time). A
   * superseded delivery batched with a step whose wait runs out gets its
   * UNAVAILABLE (its worker sends it again, and it is refused then).
   */
  private readonly stepCompletes: CompleteBatcher<CompletedDelivery>;

  private readonly writes = new Set<Promise<void>>();
  /**
   * Hand-off times of answers that could not be written, and of expiries that
   * failed (see recordHandOffs): one per delivery (an answer sent again while
   * its row is locked keeps one copy), at most MAX_UNWRITTEN_HAND_OFFS.
   */
  private readonly unwrittenHandOffs = new Map<string, HandedOut>();

  constructor(
    /** The answer pool: never shared with API reads. */
    private readonly db: Db,
    private readonly router: RetryRouting,
    /** Transitions of workflow steps, made in the answer's transaction. */
    private readonly steps: StepTransitions = new StepTransitions(router),
    /** COMPLETE_RUNS' connections: the engine's complete pool (keyedOnly), else the answer pool. */
    private readonly completeDb: Db = db,
    log?: Logger,
  ) {
    this.completes = new CompleteBatcher((items) => this.completeBatch(items), undefined, {
      giveUpAfterMs: LOCKED_GIVE_UP_MS,
      giveUp: (d, waitedMs) =>
        unavailable(`run ${d.runId}: its row has been held by another transaction for ${Math.round(waitedMs)} ms (or the daemon is stopping); send the Complete again`),
      warn: (waiting, longestMs) =>
        log?.warn({ waiting, longestMs: Math.round(longestMs) }, 'Completes skipped: their runs\' rows are held by another transaction; written again every 100 ms'),
    });
    this.stepCompletes = new CompleteBatcher((items) => this.stepBatch(items));
  }

  /** The daemon is stopping: Completes waiting for a row lock are answered UNAVAILABLE now (their workers send them again). */
  close(): void {
    this.completes.close();
    this.stepCompletes.close();
  }

  /**
   * For the warm-up (engine/warm-up.ts): writes COMPLETE_RUNS as a batch of
   * Completes would, for deliveries of runs that cannot exist (negative ids),
   * so that its code and plan are warm. Changes nothing; returns the rows matched (0).
   */
  async rehearseComplete(ds: readonly HandedOut[]): Promise<number> {
    if (ds.some((d) => d.runId >= 0)) throw new RangeError('rehearseComplete: only deliveries of negative run ids');
    const { rows } = await queryPrepared(this.completeDb, COMPLETE_RUNS_STATEMENT, COMPLETE_RUNS, deliveryArrays(ds));
    return rows.length;
  }

  /** Completes deliveries (batched with others, steps apart); per delivery, in order, null or the refusal. */
  complete(ds: readonly CompletedDelivery[]): Promise<(Error | null)[]> {
    return ds.some((d) => d.step) ? this.completeWithSteps(ds) : this.completes.completeAll(ds);
  }

  private async completeWithSteps(ds: readonly CompletedDelivery[]): Promise<(Error | null)[]> {
    // Only a delivery's first copy is known as a step (the hub forgets it once settled): its copies go with it, and share its outcome.
    const stepKeys = new Set(ds.filter((d) => d.step).map(deliveryKey));
    const isStep = ds.map((d) => stepKeys.has(deliveryKey(d)));
    const [plainOut, stepOut] = await Promise.all([
      this.completes.completeAll(ds.filter((_, i) => !isStep[i])),
      this.stepCompletes.completeAll(ds.filter((_, i) => isStep[i])),
    ]);
    let p = 0;
    let q = 0;
    return isStep.map((step) => (step ? stepOut[q++] : plainOut[p++]));
  }

  async fail(d: AnsweredDelivery, retryable: boolean, message: string, workerId: string | null = null): Promise<FailOutcome> {
    const r = await this.resolveOne(d);
    let route = (): void => undefined;
    const out = await this.keepingHandOffs([r], () => retryIfUnavailable(() => transaction(this.db, async (tx) => {
      route = () => undefined; // a retried attempt must not route what a rolled-back one wrote
      const policy = await query<{ attempt: number; max_attempts: number; initial_backoff_ms: number; max_backoff_ms: number; workflow_run_id: string | null }>(
        tx,
        SELECT_RETRY_POLICY,
        [r.runId, r.shard],
      );
      const p = policy.rows[0];
      if (!p) throw notFound(`run ${r.runId}`);
      // A step's workflow run is locked before its run (the lock order of every workflow transaction).
      if (p.workflow_run_id !== null) await this.steps.lock(tx, [p.workflow_run_id]);
      const wait = backoffMs(p.attempt, { initialBackoffMs: p.initial_backoff_ms, maxBackoffMs: p.max_backoff_ms });
      const { rows } = await query<{
        status: FailOutcome['status'];
        job_id: string;
        pause_on_failure: boolean;
        retry_id: number | null;
        retry_shard: number | null;
        retry_priority: number | null;
        retry_due_at_ms: number | null;
      }>(tx, FAIL_RUN, [r.runId, r.fence, r.deliveries, retryable, message, wait, r.shard, r.sentAtMs, workerId]);
      const row = rows[0];
      if (!row) return null;
      const retry: RunRef | null =
        row.retry_id !== null
          ? { runId: row.retry_id, shard: row.retry_shard ?? r.shard, priority: row.retry_priority ?? 0, dueAtMs: row.retry_due_at_ms ?? 0 }
          : null;
      if (retry) route = await this.router.inTransaction(tx, [retry]);
      if (p.workflow_run_id !== null && row.status !== 'failed')
        route = await this.steps.end(tx, row.job_id, row.status === 'dead' ? 'failed' : 'cancelled', message);
      if (row.status === 'dead' && row.pause_on_failure) {
        // The job's lock first: occurrences a materialiser pass just made are then seen, and taken back.
        const paused = await query(tx, PAUSE_ON_FAILURE, [row.job_id, r.runId]);
        if (paused.rowCount === 1) await query(tx, WITHDRAW_OCCURRENCES, [row.job_id, null]);
      }
      return { status: row.status, retry };
    })));
    if (!out) return refuse(this.db, r);
    route();
    return out;
  }

  async heartbeat(d: AnsweredDelivery, progress: number | null, checkpoint: Buffer | null, workerId: string | null = null): Promise<number | null> {
    const r = await this.resolveOne(d);
    const { rows } = await this.keepingHandOffs([r], () => retryIfUnavailable(() =>
      query<{ lease_expires_at_ms: number | null }>(this.db, HEARTBEAT_RUN, [r.runId, r.fence, r.deliveries, progress, checkpoint, r.sentAtMs, r.shard, workerId]),
    ));
    if (rows.length === 0) return refuse(this.db, r);
    return rows[0].lease_expires_at_ms;
  }

  /**
   * A worker stream closed with these unanswered: redeliverable now, hand-offs
   * recorded. If that fails (Postgres away, a row locked past the pool's lock
   * bound), their hand-off times are kept for recordHandOffs: an at-most-once
   * step's expiry counts from its hand-off; at-least-once runs wait for their lease.
   */
  async expire(ds: readonly HandedOut[]): Promise<void> {
    if (ds.length === 0) return;
    const write = this.keepingHandOffs(ds, () => query(this.db, EXPIRE_DELIVERIES, deliveryArrays(ds))).then(() => undefined);
    // Tracked: a daemon stopping waits for these before it closes its pools.
    this.writes.add(write);
    try {
      await write;
    } finally {
      this.writes.delete(write);
    }
  }

  /** Resolves once every expiry write started so far has finished (either way). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  /**
   * Writes `fired_at` for deliveries handed out and not answered yet, and for
   * answered ones whose answer could not be written (Postgres away, a row
   * locked past the answer pool's lock bound) or whose expiry failed: the
   * hand-off happened, whatever became of the answer. Those are kept until a
   * write succeeds.
   */
  async recordHandOffs(ds: readonly HandedOut[]): Promise<void> {
    const all = [...ds, ...this.unwrittenHandOffs.values()];
    this.unwrittenHandOffs.clear();
    if (all.length === 0) return;
    try {
      const { rows } = await query<{ id: number }>(this.db, RECORD_HAND_OFFS, deliveryArrays(all));
      if (rows.length === all.length) return;
      // Not written: answered meanwhile, or skipped for a row lock (kept for the next pass).
      const written = new Set(rows.map((r) => r.id));
      const rest = all.filter((d) => !written.has(d.runId));
      const locked = new Set((await query<{ id: number }>(this.db, HAND_OFFS_LOCKED, deliveryArrays(rest))).rows.map((r) => r.id));
      this.keepHandOffs(rest.filter((d) => locked.has(d.runId)));
    } catch (err) {
      this.keepHandOffs(all);
      throw err;
    }
  }

  /** An answer or an expiry was not written (Postgres away, a lock past the bound): keep its hand-off time for recordHandOffs. */
  private keepHandOffs(ds: readonly HandOff[]): void {
    for (const d of ds)
      if (d.sentAtMs !== null && d.shard !== null && this.unwrittenHandOffs.size < MAX_UNWRITTEN_HAND_OFFS)
        this.unwrittenHandOffs.set(deliveryKey(d), { runId: d.runId, shard: d.shard, fence: d.fence, deliveries: d.deliveries, sentAtMs: d.sentAtMs });
  }

  /** Runs `write`; if it was not written (Postgres away after retries, a lock past the bound), keeps the hand-off times of `ds`. */
  private async keepingHandOffs<T>(ds: readonly AnsweredDelivery[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (err instanceof TimelaneError && err.kind === 'unavailable') this.keepHandOffs(ds);
      throw err;
    }
  }

  private async completeBatch(items: readonly CompletedDelivery[]): Promise<(Error | null | typeof WRITE_AGAIN | Promise<Error | null>)[]> {
    const ds = await this.resolve(items); // answered in this order
    const plain = byRunId(ds);
    type Matched = { id: number; fence: number; deliveries: number };
    const { rows } =
      plain.length === 0
        ? { rows: [] }
        : await this.keepingHandOffs(plain, () => retryIfUnavailable(() =>
            queryPrepared<Matched>(this.completeDb, COMPLETE_RUNS_STATEMENT, COMPLETE_RUNS, deliveryArrays(plain, true)),
          ));
    // Keyed by the whole delivery: a superseded copy in the same batch is refused.
    const done = new Set(rows.map(matchedKey));
    const unmatched = plain.filter((d) => !done.has(deliveryKey(d)));
    // Skipped for a row lock (COMPLETE_RUNS does not wait for one): written again, not refused. Never
    // an error for the whole batch: those COMPLETE_RUNS matched are committed, and acknowledged so.
    const lockCheck =
      unmatched.length === 0
        ? { rows: [] as Matched[], err: null }
        : await query<Matched>(this.db, COMPLETE_LOCKED, deliveryArrays(unmatched, true)).then(
            ({ rows }) => ({ rows, err: null }),
            (err: Error) => ({ rows: [] as Matched[], err }),
          );
    const locked = new Set(lockCheck.rows.map(matchedKey));
    // If the check failed, whether they are locked is unknown: they get its error, and are not taken for workflow steps.
    const unjudged = new Set(lockCheck.err ? unmatched.map(deliveryKey) : []);
    // The rest are runs of workflow steps (a step's Complete sent again, or answered on
    // another stream: not known here as one), or superseded. They go on to the step
    // batcher, and settle there: a step's transaction may wait for its workflow run's
    // lock, and must not hold this batch's slot, nor the Completes written with it.
    if (unmatched.length === 0) return ds.map(() => null);
    const stepped = new Map<string, Promise<Error | null>>();
    return ds.map((d, i) => {
      const k = deliveryKey(d);
      if (done.has(k)) return null;
      if (locked.has(k)) return WRITE_AGAIN;
      if (unjudged.has(k)) return lockCheck.err;
      let step = stepped.get(k); // copies of one delivery share one outcome
      if (!step) stepped.set(k, (step = this.stepCompletes.complete({ ...items[i], ...d }).then(() => null, (err: Error) => err)));
      return step;
    });
  }

  /**
   * A batch of runs of workflow steps: their Completes commit with their
   * steps' transitions (COMPLETE_RUNS leaves step runs alone: a round trip
   * for nothing). One transaction; if it fails, every item gets its error.
   * A delivery it did not match was superseded, or is not a step's: refused.
   */
  private async stepBatch(items: readonly CompletedDelivery[]): Promise<(Error | null)[]> {
    const ds = await this.resolve(items);
    const done = new Set((await this.completeSteps(ds, items)).map(matchedKey));
    return Promise.all(ds.map((d) => (done.has(deliveryKey(d)) ? null : refuse(this.db, d).catch((err: Error) => err))));
  }

  /** Completes runs of workflow steps (or superseded deliveries: not matched) in one transaction. */
  private async completeSteps(ds: readonly KnownHandOff[], items: readonly CompletedDelivery[]): Promise<{ id: number; fence: number; deliveries: number }[]> {
    const outputs = new Map(items.map((i) => [i.runId, i.output ?? null]));
    let route = (): void => undefined;
    const done = await this.keepingHandOffs(ds, () => retryIfUnavailable(() => transaction(this.db, async (tx) => {
      const out = await this.steps.complete(tx, ds.map((d) => ({ ...d, output: outputs.get(d.runId) ?? null })));
      route = out.afterCommit;
      return out.done;
    })));
    route();
    return done;
  }

  private async resolveOne(d: AnsweredDelivery): Promise<KnownHandOff> {
    return (await this.resolve([d]))[0];
  }

  /** Fills in the shard of answers that did not carry one (not the hot path: current clients echo it). */
  private async resolve(ds: readonly AnsweredDelivery[]): Promise<KnownHandOff[]> {
    const unknown = ds.filter((d) => d.shard === null).map((d) => d.runId);
    if (unknown.length === 0) return ds as KnownHandOff[];
    const { rows } = await query<{ id: number; shard: number }>(this.db, SHARDS_OF_RUNS, [unknown]);
    const shardOf = new Map(rows.map((r) => [r.id, r.shard]));
    // An unknown run gets shard -1: its statement matches nothing and it is refused as not found.
    return ds.map((d) => ({ ...d, shard: d.shard ?? shardOf.get(d.runId) ?? -1 }));
  }
}

/**
 * A Complete skipped for a row lock this long is answered UNAVAILABLE (its
 * worker sends it again). As long as the default statement bound
 * (--database-statement-timeout-ms), which is how long it could wait for the
 * lock before the skip; fixed, so a bound of 0 (unbounded) does not make it
 * wait for ever.
 */
const LOCKED_GIVE_UP_MS = 10_000;

/** Retries of an answer statement when Postgres was unreachable, 50 then 100 ms apart. */
const ANSWER_RETRIES = 2;
/** Most hand-off times kept while they cannot be written (beyond that, a redelivery's answer records one). */
const MAX_UNWRITTEN_HAND_OFFS = 100_000;
const ANSWER_RETRY_MS = 50;

/**
 * Runs an answer statement, and again (ANSWER_RETRIES times) if Postgres was
 * unreachable: after a Postgres restart, connections that were in use are
 * dead, and a statement on one fails although Postgres is back (the pool
 * drops that connection; a retry gets a live one). Every answer statement is one
 * conditional transition, so a retry after a commit whose reply was lost
 * changes nothing (the answer is then refused as already applied).
 */
export async function retryIfUnavailable<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (err) {
      // A lock wait that ran out (the answer pool's lock bound) would only wait again: its worker sends the answer again later.
      if (!(err instanceof TimelaneError && err.kind === 'unavailable') || isLockTimeout(err) || attempt > ANSWER_RETRIES) throw err;
      await new Promise((r) => setTimeout(r, ANSWER_RETRY_MS * attempt));
    }
  }
}

/** A delivery's identity: an answer for another (a superseded copy) gets its own outcome. */
const deliveryKey = (d: { runId: number; fence: number; deliveries: number }): string => `${d.runId}:${d.fence}:${d.deliveries}`;
/** The same, of a row a statement matched. */
const matchedKey = (r: { id: number; fence: number; deliveries: number }): string => `${r.id}:${r.fence}:${r.deliveries}`;

/** Rows are locked in run id order by every multi-row answer statement: two of them can never deadlock. */
const byRunId = <T extends { runId: number }>(ds: readonly T[]): T[] => [...ds].sort((a, b) => a.runId - b.runId);

/**
 * The parameters of a multi-row delivery statement ($1 run ids … $5 hand-off
 * times), in run id order unless `sorted`, as array literals built in one
 * pass each (pg-arrays.ts: node-postgres would escape every element).
 */
function deliveryArrays(unsorted: readonly HandedOut[], sorted = false): string[] {
  const ds = sorted ? unsorted : byRunId(unsorted);
  const n = ds.length;
  const ids = new Array<number>(n);
  const fences = new Array<number>(n);
  const deliveries = new Array<number>(n);
  const shards = new Array<number>(n);
  const sent = new Array<number | null>(n);
  for (let i = 0; i < n; i++) {
    const d = ds[i];
    ids[i] = d.runId;
    fences[i] = d.fence;
    deliveries[i] = d.deliveries;
    shards[i] = d.shard;
    sent[i] = d.sentAtMs;
  }
  return [plainArray(ids), plainArray(fences), plainArray(deliveries), plainArray(shards), nullablePlainArray(sent)];
}

/** Explains why a delivery no longer matches, as the error the worker gets. */
async function refuse(db: Queryable, d: KnownHandOff): Promise<never> {
  const { rows } = await query<{ status: string; fence: number; deliveries: number }>(db, DESCRIBE_DELIVERY, [d.runId, d.shard]);
  const now = rows[0];
  if (!now) throw notFound(`run ${d.runId}`);
  if (now.status !== 'fired') throw failedPrecondition(`run ${d.runId} is ${now.status}; the answer for delivery ${d.deliveries} (fence ${d.fence}) changes nothing`);
  throw failedPrecondition(
    `delivery superseded: run ${d.runId} is now delivery ${now.deliveries} under fence ${now.fence}, the answer was for delivery ${d.deliveries} under fence ${d.fence}`,
  );
}
