/**
 * Scheduling: the writes and reads behind the Scheduler API, independent of
 * gRPC. Durable before acknowledged: every method resolves only after its
 * statement committed. A committed run due within the window reaches its
 * owner at once — directly when this daemon owns the shard, otherwise by
 * `pg_notify` in the inserting transaction (delivered on commit).
 */
import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import type { DeliveryMode, JobRow, RunRow, RunStatus } from '../db/queries/columns.js';
import {
  CANCEL_JOB,
  INSERT_JOBS,
  LIST_RUNS,
  RESCHEDULE_JOB,
  SELECT_BY_DEDUPE,
  SELECT_FIRST_RUNS,
  SELECT_JOB,
  SELECT_RUN,
  SELECT_RUNS_OF_JOB,
} from '../db/queries/jobs.js';
import { failedPrecondition, notFound } from '../errors.js';
import { shardOf } from '../shard-of.js';
import { publishNearDue, type NearDueRun } from '../slow/notifications.js';

export interface ScheduleInput {
  namespace: string;
  queue: string;
  payload: Buffer;
  dueAtMs: number;
  priority: number;
  dedupeKey: string | null;
  delivery: DeliveryMode;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  leaseMs: number;
}

export interface Scheduled {
  job: JobRow;
  run: RunRow;
  deduplicated: boolean;
}

export interface ListRunsFilter {
  jobId: string | null;
  queue: string | null;
  status: RunStatus | null;
  afterId: number;
  limit: number;
}

export interface SchedulingDeps {
  db: Db;
  schema: string;
  shardCount: number;
  windowMs: number;
  wallNow: () => number;
  /** True when this daemon owns the shard (its loader takes runs directly). */
  ownsShard: (shard: number) => boolean;
  /** Hands a committed run to this daemon's loader. */
  offerLocal: (run: NearDueRun) => void;
}

export class SchedulingService {
  constructor(private readonly deps: SchedulingDeps) {}

  /** Schedules one-shot jobs, all or none, in request order. */
  async schedule(inputs: readonly ScheduleInput[]): Promise<Scheduled[]> {
    const now = this.deps.wallNow();
    const ids = inputs.map(() => randomUUID());
    const shards = ids.map((id) => shardOf(id, this.deps.shardCount));
    const params = [
      ids,
      inputs.map((i) => i.namespace),
      inputs.map((i) => i.queue),
      shards,
      inputs.map((i) => i.payload),
      inputs.map((i) => i.priority),
      inputs.map((i) => i.dedupeKey),
      inputs.map((i) => i.delivery),
      inputs.map((i) => i.maxAttempts),
      inputs.map((i) => i.initialBackoffMs),
      inputs.map((i) => i.maxBackoffMs),
      inputs.map((i) => i.leaseMs),
      inputs.map((i) => i.dueAtMs),
    ];
    type Inserted = { id: number; job_id: string; shard: number; priority: number; due_at_ms: number };
    const remote = (rows: Inserted[]): NearDueRun[] =>
      rows.filter((r) => r.due_at_ms <= now + this.deps.windowMs && !this.deps.ownsShard(r.shard)).map(toNearDue);
    // Only a batch with near-due runs for other owners needs the notify in its transaction.
    const mayNotify = inputs.some((i, k) => i.dueAtMs <= now + this.deps.windowMs && !this.deps.ownsShard(shards[k]));
    const inserted = mayNotify
      ? await transaction(this.deps.db, async (c) => {
          const { rows } = await query<Inserted>(c, INSERT_JOBS, params);
          await publishNearDue(c, this.deps.schema, remote(rows));
          return rows;
        })
      : (await query<Inserted>(this.deps.db, INSERT_JOBS, params)).rows;

    for (const r of inserted) if (this.deps.ownsShard(r.shard)) this.deps.offerLocal(toNearDue(r));

    const byJob = new Map(inserted.map((r) => [r.job_id, r]));
    const results: (Scheduled | null)[] = inputs.map((input, k) => {
      const r = byJob.get(ids[k]);
      if (!r) return null;
      byJob.delete(ids[k]); // one result per inserted job
      return { job: jobRowOf(ids[k], shards[k], input, now), run: runRowOf(r, inputs[k].queue), deduplicated: false };
    });
    const missing = results.flatMap((r, k) => (r === null ? [k] : []));
    if (missing.length > 0) {
      const found = await this.byDedupe(missing.map((k) => inputs[k]));
      for (const k of missing) {
        const hit = found.get(`${inputs[k].namespace}\u0000${inputs[k].dedupeKey}`);
        if (!hit) throw failedPrecondition(`requests[${k}]: job vanished while deduplicating; retry`);
        results[k] = { ...hit, deduplicated: true };
      }
    }
    return results as Scheduled[];
  }

  private async byDedupe(inputs: ScheduleInput[]): Promise<Map<string, Omit<Scheduled, 'deduplicated'>>> {
    const { rows: jobs } = await query<JobRow>(this.deps.db, SELECT_BY_DEDUPE, [inputs.map((i) => i.namespace), inputs.map((i) => i.dedupeKey)]);
    const { rows: runs } = await query<RunRow>(this.deps.db, SELECT_FIRST_RUNS, [jobs.map((j) => j.id)]);
    const runOf = new Map(runs.map((r) => [r.job_id, r]));
    const out = new Map<string, Omit<Scheduled, 'deduplicated'>>();
    for (const job of jobs) {
      const run = runOf.get(job.id);
      if (run) out.set(`${job.namespace}\u0000${job.dedupe_key}`, { job, run });
    }
    return out;
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
    const run = await transaction(this.deps.db, async (c: Queryable) => {
      const { rows } = await query<RunRow>(c, RESCHEDULE_JOB, [jobId, dueAtMs]);
      const r = rows[0];
      if (r && !this.deps.ownsShard(r.shard)) await publishNearDue(c, this.deps.schema, [toNearDue(r)]);
      return r;
    });
    if (!run) {
      const { job, runs } = await this.getJob(jobId);
      const last = runs.at(-1);
      throw failedPrecondition(`job ${jobId} has no scheduled run to move (job is ${job.status}, last run is ${last?.status ?? 'missing'})`);
    }
    if (this.deps.ownsShard(run.shard)) this.deps.offerLocal(toNearDue(run));
    return run;
  }
}

function toNearDue(r: { id: number; shard: number; priority: number; due_at_ms: number }): NearDueRun {
  return { runId: r.id, shard: r.shard, dueAtMs: r.due_at_ms, priority: r.priority };
}

function jobRowOf(id: string, shard: number, i: ScheduleInput, now: number): JobRow {
  return {
    id,
    namespace: i.namespace,
    queue: i.queue,
    shard,
    payload: i.payload,
    priority: i.priority,
    dedupe_key: i.dedupeKey,
    delivery: i.delivery,
    max_attempts: i.maxAttempts,
    initial_backoff_ms: i.initialBackoffMs,
    max_backoff_ms: i.maxBackoffMs,
    lease_ms: i.leaseMs,
    status: 'active',
    created_at_ms: now,
    updated_at_ms: now,
  };
}

function runRowOf(r: { id: number; job_id: string; shard: number; priority: number; due_at_ms: number }, queue: string): RunRow {
  return {
    id: r.id,
    job_id: r.job_id,
    shard: r.shard,
    queue,
    priority: r.priority,
    attempt: 1,
    status: 'scheduled',
    due_at_ms: r.due_at_ms,
    fired_at_ms: null,
    lag_ms: null,
    fence: 0,
    deliveries: 0,
    lease_expires_at_ms: null,
    idempotency_key: `${r.job_id}:${r.due_at_ms}`,
    error: null,
    finished_at_ms: null,
  };
}
