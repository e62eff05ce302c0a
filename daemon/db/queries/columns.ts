/** Shared select lists and the row types they produce. Times come back as epoch ms (int8 → number). */

/** A timestamp column as epoch ms. */
export const ms = (col: string): string => `(extract(epoch FROM ${col}) * 1000)::int8`;

export const RUN_COLUMNS = `r.id, r.job_id, r.shard, r.queue, r.priority, r.attempt, r.status,
  ${ms('r.due_at')} AS due_at_ms, ${ms('r.fired_at')} AS fired_at_ms, r.lag_ms, r.fence, r.deliveries,
  ${ms('r.lease_expires_at')} AS lease_expires_at_ms, r.idempotency_key, r.error,
  ${ms('r.finished_at')} AS finished_at_ms, ${ms('r.claimed_at')} AS claimed_at_ms, ${ms('r.nominal_at')} AS nominal_at_ms, r.origin,
  r.worker_id, r.progress, r.replay_of, ${ms('r.cancel_requested_at')} AS cancel_requested_at_ms`;

export const JOB_COLUMNS = `j.id, j.namespace, j.queue, j.shard, j.payload, j.priority, j.dedupe_key, j.delivery,
  j.max_attempts, j.initial_backoff_ms, j.max_backoff_ms, j.lease_ms, j.status,
  ${ms('j.created_at')} AS created_at_ms, ${ms('j.updated_at')} AS updated_at_ms,
  j.kind, j.recurrence, ${ms('j.next_fire_at')} AS next_fire_at_ms, j.occurrences, j.missed_count, j.pause_note,
  (SELECT ${ms('min(o.due_at)')} FROM runs o WHERE o.job_id = j.id AND o.status = 'scheduled' AND o.origin IS NOT NULL AND j.kind <> 'once') AS next_run_due_ms`;

export type RunStatus = 'scheduled' | 'fired' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'skipped' | 'buffered' | 'missed';
export type JobStatus = 'active' | 'paused' | 'completed' | 'dead' | 'cancelled';
export type JobKind = 'once' | 'cron' | 'interval';
/** Why a run exists: null for a one-shot job's runs. */
export type RunOrigin = 'schedule' | 'trigger' | 'trigger_forced' | 'backfill' | 'replay' | 'workflow';
export type DeliveryMode = 'at_least_once' | 'at_most_once';

export interface RunRow {
  id: number;
  job_id: string;
  shard: number;
  queue: string;
  priority: number;
  attempt: number;
  status: RunStatus;
  due_at_ms: number;
  /** When the run was handed to a worker stream (null until that is recorded). */
  fired_at_ms: number | null;
  /** fired_at − due_at, ms. */
  lag_ms: number | null;
  /** When the current delivery was claimed (the fenced UPDATE ran). */
  claimed_at_ms: number | null;
  fence: number;
  deliveries: number;
  lease_expires_at_ms: number | null;
  idempotency_key: string;
  error: string | null;
  finished_at_ms: number | null;
  /** Recurring jobs: the occurrence's nominal time. */
  nominal_at_ms: number | null;
  origin: RunOrigin | null;
  /** The worker that last heartbeated or failed it. */
  worker_id: string | null;
  progress: number | null;
  /** ReplayRuns: the dead run this one replays. */
  replay_of: number | null;
  /** CancelJob asked its worker to stop it. */
  cancel_requested_at_ms: number | null;
}

export interface JobRow {
  id: string;
  namespace: string;
  queue: string;
  shard: number;
  payload: Buffer;
  priority: number;
  dedupe_key: string | null;
  delivery: DeliveryMode;
  max_attempts: number;
  initial_backoff_ms: number;
  max_backoff_ms: number;
  lease_ms: number;
  status: JobStatus;
  created_at_ms: number;
  updated_at_ms: number;
  kind: JobKind;
  /** The stored rule (daemon/recurring/recurrence.ts parses it); null for one-shot jobs. */
  recurrence: unknown;
  next_fire_at_ms: number | null;
  occurrences: number;
  missed_count: number;
  pause_note: string | null;
  /** Due time of a recurring job's earliest occurrence made a run and waiting for it (runs_job_live); null when none. */
  next_run_due_ms: number | null;
}

/**
 * A claimed (or redelivered) run: what the worker receives, and what the
 * delivery needs of it. Only that: the claim returns it for every fired run,
 * and each column more is parsed (and for times, converted) per run.
 */
export interface FiredRunRow
  extends Pick<
    RunRow,
    'id' | 'job_id' | 'shard' | 'queue' | 'priority' | 'attempt' | 'due_at_ms' | 'fence' | 'deliveries' | 'lease_expires_at_ms' | 'idempotency_key' | 'claimed_at_ms' | 'nominal_at_ms' | 'origin' | 'progress'
  > {
  payload: Buffer;
  /** The last checkpoint heartbeated for this occurrence (an earlier delivery or attempt). */
  checkpoint: Buffer | null;
  /**
   * The run's W3C trace context (migrations/0009), null when it carries none.
   * With tracing on, a run claimed without one gets its claim span's here
   * (in memory only), so its hand-out and answer join that trace.
   */
  traceparent?: string | null;
  tracestate?: string | null;
  /** The job's namespace (what an in-process consumer acts in, never its payload's say). */
  job_namespace: string;
  delivery: DeliveryMode;
  /** Runs of workflow steps: the workflow run and step, and the parents' outputs (in parent_steps order). */
  workflow_run_id?: string | null;
  workflow_step?: string | null;
  parent_steps?: string[] | null;
  parent_outputs?: Buffer[] | null;
}
