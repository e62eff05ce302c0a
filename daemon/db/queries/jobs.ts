import { JOB_COLUMNS, RUN_COLUMNS } from './columns.js';

/**
 * insertJobs — one-shot jobs with their first run, many at once.
 * $1 ids uuid[], $2 namespaces text[], $3 queues text[], $4 shards int[],
 * $5 payloads bytea[], $6 priorities int[], $7 dedupe keys text[] (null = none),
 * $8 deliveries text[], $9 max attempts int[], $10 initial backoffs int[],
 * $11 max backoffs int[], $12 leases int[], $13 due times int8[] (epoch ms).
 * Rows whose (namespace, dedupe_key) exists are skipped (see selectByDedupe).
 */
export const INSERT_JOBS = `
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::bytea[], $6::int[], $7::text[],
                       $8::text[], $9::int[], $10::int[], $11::int[], $12::int[], $13::int8[])
    AS t(id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts,
         initial_backoff_ms, max_backoff_ms, lease_ms, due_ms)
), jobs_in AS (
  INSERT INTO jobs (id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts,
                    initial_backoff_ms, max_backoff_ms, lease_ms, status)
  SELECT id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts,
         initial_backoff_ms, max_backoff_ms, lease_ms, 'active' FROM input
  ON CONFLICT (namespace, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
  RETURNING id
)
INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key)
SELECT i.id, i.shard, i.queue, i.priority, 1, 'scheduled', to_timestamp(i.due_ms / 1000.0), i.id || ':' || i.due_ms
FROM input i JOIN jobs_in USING (id)
RETURNING id, job_id, shard, priority, (extract(epoch FROM due_at) * 1000)::int8 AS due_at_ms`;

/** selectByDedupe — existing jobs for dedupe keys. $1 namespaces text[], $2 dedupe keys text[]. */
export const SELECT_BY_DEDUPE = `
SELECT ${JOB_COLUMNS} FROM jobs j
JOIN unnest($1::text[], $2::text[]) AS k(namespace, dedupe_key) USING (namespace, dedupe_key)`;

/** selectJob — one job. $1 job id. */
export const SELECT_JOB = `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = $1`;

/** selectJobs — many jobs. $1 job ids uuid[]. */
export const SELECT_JOBS = `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = ANY($1::uuid[])`;

/** selectRunsOfJob — every attempt of a job, oldest first. $1 job id. */
export const SELECT_RUNS_OF_JOB = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.job_id = $1 ORDER BY r.attempt, r.id`;

/** selectFirstRuns — the first run of each job. $1 job ids uuid[]. */
export const SELECT_FIRST_RUNS = `
SELECT DISTINCT ON (r.job_id) ${RUN_COLUMNS} FROM runs r WHERE r.job_id = ANY($1::uuid[]) ORDER BY r.job_id, r.id`;

/** selectRun — one run. $1 run id. */
export const SELECT_RUN = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = $1`;

/**
 * listRuns — a page of runs ordered by id. $1 job id (null = any), $2 queue
 * (null = any), $3 status (null = any), $4 after id (exclusive), $5 limit.
 */
export const LIST_RUNS = `
SELECT ${RUN_COLUMNS} FROM runs r
WHERE ($1::uuid IS NULL OR r.job_id = $1) AND ($2::text IS NULL OR r.queue = $2)
  AND ($3::text IS NULL OR r.status = $3) AND r.id > $4
ORDER BY r.id LIMIT $5`;

/**
 * cancelJob — active job → cancelled, and its scheduled runs → cancelled, in
 * one statement. Runs already fired are untouched (the claim won the race).
 * $1 job id. Returns the runs it cancelled.
 */
export const CANCEL_JOB = `
WITH runs_out AS (
  UPDATE runs SET status = 'cancelled', finished_at = now()
  WHERE job_id = $1 AND status = 'scheduled'
  RETURNING id, shard
), job_out AS (
  UPDATE jobs SET status = 'cancelled', updated_at = now()
  WHERE id = $1 AND status = 'active' AND EXISTS (SELECT 1 FROM runs_out)
  RETURNING id
)
SELECT id, shard FROM runs_out`;

/**
 * rescheduleJob — a scheduled run of an active job moves to a new due time.
 * $1 job id, $2 new due time (epoch ms).
 */
export const RESCHEDULE_JOB = `
UPDATE runs r SET due_at = to_timestamp($2::int8 / 1000.0), idempotency_key = r.job_id || ':' || $2::int8
WHERE r.job_id = $1 AND r.status = 'scheduled'
RETURNING ${RUN_COLUMNS}`;
