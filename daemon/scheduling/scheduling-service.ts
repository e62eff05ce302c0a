/**
 * Scheduling: the writes and reads behind the Scheduler API, independent of
 * gRPC. Durable before acknowledged: every method resolves only after its
 * statement committed. Every committed run goes through the engine's router
 * (daemon/engine/router.ts): to the local engine when this daemon owns the
 * shard, otherwise by `pg_notify` in the committing transaction when it is
 * due within the window. The batch write path is schedule-batch.ts.
 */
import type { Queryable } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import type { JobRow, RunRow, RunStatus } from '../db/queries/columns.js';
import { CANCEL_JOB, LIST_QUEUES, LIST_RUNS, NAMESPACES_OF_RUNS, RESCHEDULE_JOB, SELECT_JOB, SELECT_RUN, SELECT_RUNS_OF_JOB } from '../db/queries/jobs.js';
import { plainArray } from './pg-arrays.js';
import { failedPrecondition, notFound } from '../errors.js';
import type { AfterCommit } from '../engine/router.js';
import { runRefOf } from '../run-ref.js';
import { scheduleBatch, type RequestPath } from './schedule-batch.js';
import { attemptsOf, listDeadRuns, replayRuns, type DeadRunsFilter, type Replayed } from './dead-letters.js';
import type { ScheduleInput, Scheduled, ScheduledBatch, SchedulingDeps } from './types.js';
import type { TraceContext } from '../tracing/trace-context.js';

export type { ScheduleInput, Scheduled, ScheduledBatch, SchedulingDeps } from './types.js';

export interface ListRunsFilter {
  jobId: string | null;
  queue: string | null;
  status: RunStatus | null;
  afterId: number;
  limit: number;
  /** Only runs of this namespace's jobs; null or absent: every namespace. */
  namespace?: string | null;
  /** Only runs due at or after / at or before (epoch ms); null or absent: unbounded. */
  dueFromMs?: number | null;
  dueToMs?: number | null;
}

export class SchedulingService {
  constructor(private readonly deps: SchedulingDeps) {}

  /**
   * Schedules one-shot jobs, all or none, in request order; their runs carry
   * `trace` (null: none). `at` names a request's fields in errors (default: `requests[k].`).
   */
  async schedule(inputs: readonly ScheduleInput[], trace: TraceContext | null = null, at?: RequestPath): Promise<Scheduled[]> {
    return (await scheduleBatch(this.deps, inputs, null, trace, at)).scheduled;
  }

  /**
   * Like schedule(), with an optional batch idempotency key: a batch whose key
   * was committed before is not applied again; its result is rebuilt instead
   * (`replayed`). Every input of a keyed batch names the same namespace.
   */
  scheduleBatch(inputs: readonly ScheduleInput[], batchId: string | null, trace: TraceContext | null = null): Promise<ScheduledBatch> {
    return scheduleBatch(this.deps, inputs, batchId, trace);
  }

  async getJob(jobId: string): Promise<{ job: JobRow; runs: RunRow[] }> {
    const { rows } = await query<JobRow>(this.deps.db, SELECT_JOB, [jobId]);
    if (!rows[0]) throw notFound(`job ${jobId}`);
    const { rows: runs } = await query<RunRow>(this.deps.db, SELECT_RUNS_OF_JOB, [jobId]);
    return { job: rows[0], runs };
  }

  async getRun(runId: number): Promise<RunRow> {
    const { rows } = await query<RunRow>(this.deps.db, SELECT_RUN, [runId]);
    if (!rows[0]) throw notFound(`run ${runId}`);
    return rows[0];
  }

  /** Every attempt of a run's occurrence, oldest first (the run included). */
  attempts(run: RunRow): Promise<RunRow[]> {
    return attemptsOf(this.deps.db, run);
  }

  listDeadRuns(f: DeadRunsFilter): Promise<RunRow[]> {
    return listDeadRuns(this.deps.db, f);
  }

  /** Replays dead runs by id, or every one matching a filter (up to its limit). */
  async replayRuns(sel: { ids: number[] } | { filter: DeadRunsFilter }): Promise<{ replayed: Replayed[]; skipped: number[] }> {
    const ids = 'ids' in sel ? sel.ids : (await listDeadRuns(this.deps.db, sel.filter)).map((r) => r.id);
    if (ids.length === 0) return { replayed: [], skipped: [] };
    return replayRuns(this.deps.db, this.deps.router, ids);
  }

  /** Queue names of runs after `after`, in order; only those starting with `prefix`. */
  async listQueues(after: string, prefix: string, limit: number): Promise<string[]> {
    const { rows } = await query<{ queue: string }>(this.deps.db, LIST_QUEUES, [after, prefix, limit]);
    return rows.map((r) => r.queue);
  }

  async listRuns(f: ListRunsFilter): Promise<RunRow[]> {
    const { rows } = await query<RunRow>(this.deps.db, LIST_RUNS, [f.jobId, f.queue, f.status, f.afterId, f.limit, f.namespace ?? null, f.dueFromMs ?? null, f.dueToMs ?? null]);
    return rows;
  }

  /** Each run's job namespace (runs that do not exist are absent). */
  async namespacesOfRuns(runIds: readonly number[]): Promise<Map<number, string>> {
    const { rows } = await query<{ id: number; namespace: string }>(this.deps.db, NAMESPACES_OF_RUNS, [plainArray(runIds)]);
    return new Map(rows.map((r) => [Number(r.id), r.namespace]));
  }

  /**
   * Cancels a job: its runs waiting to fire never fire (`onCancelled` drops
   * them from memory); the workers of its running runs are told to stop,
   * through the router (the shard's owner holds their streams).
   */
  async cancelJob(jobId: string, onCancelled: (runId: number, shard: number) => void): Promise<{ job: JobRow; runsCancelled: number; runsCancelling: number }> {
    let afterCommit: AfterCommit | undefined;
    const rows = await transaction(this.deps.db, async (tx) => {
      // No lock on the job first: runs then jobs, the order a Complete takes its locks in
      // (the other order deadlocked with it). A materialiser pass in progress holds the
      // job until it commits; the second statement below then sees what it made.
      type Touched = { id: number; shard: number; what: 'cancelled' | 'cancelling' };
      const { rows: first } = await query<Touched>(tx, CANCEL_JOB, [jobId]);
      // A claim that committed while we waited for its row: our snapshot saw the
      // run scheduled, the re-check saw it fired, so neither branch took it; or
      // occurrences a materialiser pass committed meanwhile. A second statement
      // (a new snapshot) finds them.
      const { rows: second } = await query<Touched>(tx, CANCEL_JOB, [jobId]);
      const touched = [...first, ...second];
      const stopping = touched.filter((r) => r.what === 'cancelling').map((r) => ({ runId: r.id, shard: r.shard }));
      if (stopping.length > 0) afterCommit = await this.deps.router.cancelInTransaction(tx, stopping, 'job cancelled');
      return touched;
    });
    afterCommit?.();
    const cancelled = rows.filter((r) => r.what === 'cancelled');
    for (const r of cancelled) onCancelled(r.id, r.shard);
    const { job } = await this.getJob(jobId);
    return { job, runsCancelled: cancelled.length, runsCancelling: rows.length - cancelled.length };
  }

  /** Moves a job's scheduled run to a new due time; the owner is told like on schedule. */
  async rescheduleJob(jobId: string, dueAtMs: number): Promise<RunRow> {
    let afterCommit: AfterCommit | undefined;
    const run = await transaction(this.deps.db, async (c: Queryable) => {
      const { rows } = await query<RunRow>(c, RESCHEDULE_JOB, [jobId, dueAtMs]);
      const r = rows[0];
      if (r) afterCommit = await this.deps.router.inTransaction(c, [runRefOf(r)]);
      return r;
    });
    if (!run) {
      const { job, runs } = await this.getJob(jobId);
      const last = runs.at(-1);
      // Only a one-shot job's run moves: say why another kind's scheduled run does not.
      if (runs.some((r) => r.origin === 'workflow')) throw failedPrecondition(`job ${jobId} is a workflow step: its run is started by its workflow and cannot be moved`);
      if (job.kind !== 'once') throw failedPrecondition(`job ${jobId} is recurring: its runs follow its rule (UpdateJob changes it)`);
      throw failedPrecondition(`job ${jobId} has no scheduled run to move (job is ${job.status}, last run is ${last?.status ?? 'missing'})`);
    }
    afterCommit?.();
    return run;
  }
}

