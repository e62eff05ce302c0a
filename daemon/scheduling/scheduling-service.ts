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
import { CANCEL_JOB, LIST_RUNS, RESCHEDULE_JOB, SELECT_JOB, SELECT_RUN, SELECT_RUNS_OF_JOB } from '../db/queries/jobs.js';
import { failedPrecondition, notFound } from '../errors.js';
import type { AfterCommit } from '../engine/router.js';
import { runRefOf } from '../run-ref.js';
import { scheduleBatch } from './schedule-batch.js';
import type { ScheduleInput, Scheduled, ScheduledBatch, SchedulingDeps } from './types.js';

export type { ScheduleInput, Scheduled, ScheduledBatch, SchedulingDeps } from './types.js';

export interface ListRunsFilter {
  jobId: string | null;
  queue: string | null;
  status: RunStatus | null;
  afterId: number;
  limit: number;
}

export class SchedulingService {
  constructor(private readonly deps: SchedulingDeps) {}

  /** Schedules one-shot jobs, all or none, in request order. */
  async schedule(inputs: readonly ScheduleInput[]): Promise<Scheduled[]> {
    return (await scheduleBatch(this.deps, inputs, null)).scheduled;
  }

  /**
   * Like schedule(), with an optional batch idempotency key: a batch whose key
   * was committed before is not applied again; its result is rebuilt instead
   * (`replayed`). Every input of a keyed batch names the same namespace.
   */
  scheduleBatch(inputs: readonly ScheduleInput[], batchId: string | null): Promise<ScheduledBatch> {
    return scheduleBatch(this.deps, inputs, batchId);
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

  async listRuns(f: ListRunsFilter): Promise<RunRow[]> {
    const { rows } = await query<RunRow>(this.deps.db, LIST_RUNS, [f.jobId, f.queue, f.status, f.afterId, f.limit]);
    return rows;
  }

  /** Cancels a job's scheduled runs. A run the claim already took is not touched. */
  async cancelJob(jobId: string, onCancelled: (runId: number, shard: number) => void): Promise<{ job: JobRow; runsCancelled: number }> {
    const { rows } = await query<{ id: number; shard: number }>(this.deps.db, CANCEL_JOB, [jobId]);
    for (const r of rows) onCancelled(r.id, r.shard);
    const { job } = await this.getJob(jobId);
    return { job, runsCancelled: rows.length };
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
      throw failedPrecondition(`job ${jobId} has no scheduled run to move (job is ${job.status}, last run is ${last?.status ?? 'missing'})`);
    }
    afterCommit?.();
    return run;
  }
}

