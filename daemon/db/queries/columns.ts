/** Shared select lists and the row types they produce. Times come back as epoch ms (int8 → number). */

const ms = (col: string): string => `(extract(epoch FROM ${col}) * 1000)::int8`;

export const RUN_COLUMNS = `r.id, r.job_id, r.shard, r.queue, r.priority, r.attempt, r.status,
  ${ms('r.due_at')} AS due_at_ms, ${ms('r.fired_at')} AS fired_at_ms, r.lag_ms, r.fence, r.deliveries,
  ${ms('r.lease_expires_at')} AS lease_expires_at_ms, r.idempotency_key, r.error,
  ${ms('r.finished_at')} AS finished_at_ms, ${ms('r.claimed_at')} AS claimed_at_ms`;

export const JOB_COLUMNS = `j.id, j.namespace, j.queue, j.shard, j.payload, j.priority, j.dedupe_key, j.delivery,
  j.max_attempts, j.initial_backoff_ms, j.max_backoff_ms, j.lease_ms, j.status,
  ${ms('j.created_at')} AS created_at_ms, ${ms('j.updated_at')} AS updated_at_ms`;

export type RunStatus = 'scheduled' | 'fired' | 'completed' | 'failed' | 'dead' | 'cancelled';
export type JobStatus = 'active' | 'completed' | 'dead' | 'cancelled';
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
}

/** A claimed (or redelivered) run: what the worker receives. */
export interface FiredRunRow extends RunRow {
  payload: Buffer;
  delivery: DeliveryMode;
  max_attempts: number;
  initial_backoff_ms: number;
  max_backoff_ms: number;
}
