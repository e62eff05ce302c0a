import { JOB_COLUMNS, RUN_COLUMNS } from './columns.js';

/**
 * insertJobs — one-shot jobs with their first run, a whole batch in one
 * statement. Arrays are literals (see scheduling/pg-arrays.ts), in request
 * order: $1 ids uuid[], $4 shards int[], $15 due times int8[] (epoch ms) and
 * $9 dedupe keys text[] (NULL = none; '{}' when no request has one) hold one
 * element per request; $2 namespaces text[], $3 queues text[], $8 priorities
 * int[], $10 deliveries text[], $11 max attempts int[], $12 initial backoffs
 * int[], $13 max backoffs int[] and $14 leases int[] hold one per request or
 * a single one shared by all (most batches: Postgres parses one value, not a
 * thousand). $5 payloads bytea (all of them, concatenated) with $6 offsets
 * int[] and $7 lengths int[] into it, one per request.
 * Returns one row: `run_ids`, the new run id of each request in order,
 * comma-separated, empty where the request was skipped because its
 * (namespace, dedupe_key) exists — committed earlier or an earlier request of
 * this batch, which wins (see selectDedupeRefs). Without dedupe keys, use
 * INSERT_JOBS (no conflict arbiter: a plain insert is cheaper).
 * $16 traceparent text and $17 tracestate text (NULL: none) are the trace
 * context of the whole batch (one call's gRPC metadata), stored on every run.
 */
const insertJobs = (onConflict: string): string => `
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $4::int[], $15::int8[], $9::text[], $6::int[], $7::int[],
                       $2::text[], $3::text[], $8::int[], $10::text[], $11::int[], $12::int[], $13::int[], $14::int[])
    WITH ORDINALITY AS t(id, shard, due_ms, dedupe_key, payload_off, payload_len,
                         namespace_, queue_, priority_, delivery_, max_attempts_, initial_backoff_ms_, max_backoff_ms_, lease_ms_, ord)
), cols AS (
  SELECT id, shard, due_ms, dedupe_key, payload_off, payload_len, ord,
         ${shared('namespace', '$2::text[]')}, ${shared('queue', '$3::text[]')}, ${shared('priority', '$8::int[]')},
         ${shared('delivery', '$10::text[]')}, ${shared('max_attempts', '$11::int[]')},
         ${shared('initial_backoff_ms', '$12::int[]')}, ${shared('max_backoff_ms', '$13::int[]')}, ${shared('lease_ms', '$14::int[]')}
  FROM input
), jobs_in AS (
  INSERT INTO jobs (id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts,
                    initial_backoff_ms, max_backoff_ms, lease_ms, status)
  SELECT id, namespace, queue, shard, substring($5::bytea FROM payload_off + 1 FOR payload_len), priority, dedupe_key,
         delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms, 'active'
  FROM cols ORDER BY ord
  ${onConflict}
  RETURNING id
), runs_in AS (
  INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key, traceparent, tracestate)
  SELECT c.id, c.shard, c.queue, c.priority, 1, 'scheduled', to_timestamp(c.due_ms::float8 / 1000), c.id || ':' || c.due_ms,
         $16::text, $17::text
  FROM cols c JOIN jobs_in USING (id) ORDER BY c.ord
  RETURNING id, job_id
)
SELECT string_agg(coalesce(r.id::text, ''), ',' ORDER BY c.ord) AS run_ids
FROM cols c LEFT JOIN runs_in r ON r.job_id = c.id`;

/** A column given per request or once for all (see insertJobs). */
const shared = (col: string, param: string): string => `CASE WHEN cardinality(${param}) = 1 THEN (${param})[1] ELSE ${col}_ END AS ${col}`;

/** insertJobs for batches without dedupe keys. */
export const INSERT_JOBS = insertJobs('');
/** insertJobs for batches with dedupe keys: requests whose key exists are skipped. */
export const INSERT_JOBS_DEDUPE = insertJobs('ON CONFLICT (namespace, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING');

/** What ScheduleBatch reports about a job that already existed: `idx` names the request it answers. */
const REF_COLUMNS = `k.idx::int AS idx, j.id AS job_id, j.shard, j.delivery, f.id AS run_id, f.status, f.priority,
  (extract(epoch FROM f.due_at) * 1000)::int8 AS due_at_ms`;
// LEFT: a recurring job may have no run yet (its first occurrence lies beyond the window).
const FIRST_RUN = `LEFT JOIN LATERAL (SELECT r.id, r.status, r.priority, r.due_at FROM runs r WHERE r.job_id = j.id ORDER BY r.attempt, r.id LIMIT 1) f ON true`;

/**
 * selectDedupeRefs — the job holding each (namespace, dedupe key), with its
 * first run. $1 request indexes int[], $2 namespaces text[], $3 dedupe keys
 * text[]. Keys without a job return no row.
 */
export const SELECT_DEDUPE_REFS = `
SELECT ${REF_COLUMNS}
FROM unnest($1::int[], $2::text[], $3::text[]) AS k(idx, namespace, dedupe_key)
JOIN jobs j ON j.namespace = k.namespace AND j.dedupe_key = k.dedupe_key
${FIRST_RUN}`;

/**
 * selectJobRefs — jobs by id, with their first run. $1 job ids uuid[]; the
 * row's `idx` is the 0-based position of its id in $1. Missing ids return no row.
 */
export const SELECT_JOB_REFS = `
SELECT ${REF_COLUMNS}
FROM (SELECT u.id, u.ord - 1 AS idx FROM unnest($1::uuid[]) WITH ORDINALITY AS u(id, ord)) k
JOIN jobs j ON j.id = k.id
${FIRST_RUN}`;

/**
 * claimBatchKey — records a batch idempotency key; the first statement of a
 * keyed batch's transaction. $1 namespace, $2 batch id, $3 request count.
 * Returns a row when the key is new. When another transaction holds the same
 * key, waits for it: committed ⇒ no row (replay it), rolled back ⇒ the key is
 * ours. Also prunes up to 16 keys older than 24 hours (skipping locked ones),
 * so the table stays small without a maintenance job.
 */
export const CLAIM_BATCH_KEY = `
WITH pruned AS (
  DELETE FROM schedule_batches WHERE (namespace, batch_id) IN (
    SELECT namespace, batch_id FROM schedule_batches WHERE created_at < now() - interval '24 hours'
    ORDER BY created_at LIMIT 16 FOR UPDATE SKIP LOCKED)
)
INSERT INTO schedule_batches (namespace, batch_id, requests) VALUES ($1, $2, $3)
ON CONFLICT (namespace, batch_id) DO NOTHING
RETURNING requests`;

/** selectBatchKey — a committed batch key. $1 namespace, $2 batch id. */
export const SELECT_BATCH_KEY = `SELECT requests FROM schedule_batches WHERE namespace = $1 AND batch_id = $2`;

/** selectJob — one job. $1 job id. */
export const SELECT_JOB = `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = $1`;

/** selectJobs — many jobs. $1 job ids uuid[]. */
export const SELECT_JOBS = `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = ANY($1::uuid[])`;

/** selectRunsOfJob — every attempt of a job, oldest first. $1 job id. */
export const SELECT_RUNS_OF_JOB = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.job_id = $1 ORDER BY r.attempt, r.id`;

/** selectRun — one run. $1 run id. */
export const SELECT_RUN = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = $1`;

/**
 * listRuns — a page of runs ordered by id. $1 job id (null = any), $2 queue
 * (null = any), $3 status (null = any), $4 after id (exclusive), $5 limit,
 * $6 namespace (null = any), $7 / $8 due at or after / at or before, epoch
 * ms (null = unbounded).
 */
export const LIST_RUNS = `
SELECT ${RUN_COLUMNS} FROM runs r
WHERE ($1::uuid IS NULL OR r.job_id = $1) AND ($2::text IS NULL OR r.queue = $2)
  AND ($3::text IS NULL OR r.status = $3) AND r.id > $4
  AND ($6::text IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.id = r.job_id AND j.namespace = $6))
  AND ($7::int8 IS NULL OR r.due_at >= to_timestamp($7::int8 / 1000.0)) AND ($8::int8 IS NULL OR r.due_at <= to_timestamp($8::int8 / 1000.0))
ORDER BY r.id LIMIT $5`;

/**
 * listQueues — distinct queue names after $1 ('' = from the first), in name
 * order: those of runs and those of recurring jobs (whose next run may not
 * be made yet), each by a skip scan (runs_queue_status, jobs_recurring_queue):
 * one index probe per name. Each walk starts at the caller's prefix $2 (a
 * namespace's "ns/"; '' = any) and stops once it found $3 names with it, so
 * a page reads about a page of names, not every name there is.
 */
export const LIST_QUEUES = `
WITH RECURSIVE q(queue, n) AS (
  (SELECT r.queue, starts_with(r.queue, $2)::int FROM runs r WHERE r.queue > greatest($1::text, $2::text) ORDER BY r.queue LIMIT 1)
  UNION ALL
  SELECT nx.queue, q.n + starts_with(nx.queue, $2)::int
  FROM q, LATERAL (SELECT r.queue FROM runs r WHERE r.queue > q.queue ORDER BY r.queue LIMIT 1) nx
  WHERE q.n < $3
), rq(queue, n) AS (
  (SELECT j.queue, starts_with(j.queue, $2)::int FROM jobs j WHERE j.kind <> 'once' AND j.queue > greatest($1::text, $2::text) ORDER BY j.queue LIMIT 1)
  UNION ALL
  SELECT nx.queue, rq.n + starts_with(nx.queue, $2)::int
  FROM rq, LATERAL (SELECT j.queue FROM jobs j WHERE j.kind <> 'once' AND j.queue > rq.queue ORDER BY j.queue LIMIT 1) nx
  WHERE rq.n < $3
)
SELECT queue FROM (SELECT queue FROM q UNION SELECT queue FROM rq) u
WHERE starts_with(queue, $2) ORDER BY queue LIMIT $3`;

/** countWaitingRuns — runs of a namespace's jobs waiting to fire (quota max_scheduled_runs). $1 namespace. */
export const COUNT_WAITING_RUNS = `
SELECT count(*) AS n FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard
WHERE j.namespace = $1 AND r.status IN ('scheduled', 'buffered')`;

/** namespacesOfRuns — each run's job namespace (tenancy checks). $1 run ids int8[]. */
export const NAMESPACES_OF_RUNS = `
SELECT r.id, j.namespace FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard WHERE r.id = ANY($1::int8[])`;

/**
 * cancelJob — active (or paused) job → cancelled; its runs waiting to fire
 * (scheduled, buffered) → cancelled; its running (fired) runs are marked
 * cancel-requested, for their workers to be told (cooperative: such a run
 * ends cancelled on its worker's Fail or lease end, completed on its
 * Complete, and is never redelivered). One statement. A one-shot job is
 * cancelled only with a run to cancel or stop; a recurring one always (its
 * rule stops). $1 job id. Returns the runs it touched: `cancelled` or `cancelling`.
 */
export const CANCEL_JOB = `
WITH runs_out AS (
  UPDATE runs SET status = 'cancelled', finished_at = now()
  WHERE job_id = $1 AND status IN ('scheduled', 'buffered')
  RETURNING id, shard
), stopping AS (
  UPDATE runs SET cancel_requested_at = now()
  WHERE job_id = $1 AND status = 'fired' AND cancel_requested_at IS NULL
  RETURNING id, shard
), job_out AS (
  -- next_fire_at cleared: a cancelled job leaves the materialiser's index (jobs_next_fire, migration 0011).
  UPDATE jobs SET status = 'cancelled', next_fire_at = NULL, updated_at = now()
  WHERE id = $1 AND (
    (status IN ('active', 'paused') AND (kind <> 'once' OR EXISTS (SELECT 1 FROM runs_out) OR EXISTS (SELECT 1 FROM stopping)))
    -- A recurring job whose rule ended (limit, end time) is 'completed' once its last occurrences are made:
    -- those still to fire (or running) make the cancel a cancel of the job too.
    OR (status = 'completed' AND kind <> 'once' AND (EXISTS (SELECT 1 FROM runs_out) OR EXISTS (SELECT 1 FROM stopping))))
  RETURNING id
)
SELECT id, shard, 'cancelled' AS what FROM runs_out
UNION ALL SELECT id, shard, 'cancelling' AS what FROM stopping`;

/**
 * rescheduleJob — the scheduled run of a one-shot job moves to a new due
 * time (a recurring job follows its rule: UpdateJob changes that). A first
 * attempt takes the new time's idempotency key; a retry keeps its
 * occurrence's (workers key their effects on it across attempts).
 * $1 job id, $2 new due time (epoch ms).
 */
export const RESCHEDULE_JOB = `
UPDATE runs r SET due_at = to_timestamp($2::int8 / 1000.0),
  idempotency_key = CASE WHEN r.attempt = 1 THEN r.job_id || ':' || $2::int8 ELSE r.idempotency_key END
WHERE r.job_id = $1 AND r.status = 'scheduled' AND r.origin IS NULL
RETURNING ${RUN_COLUMNS}`;

/**
 * listDeadRuns — dead letters, newest death first. $1 queue, $2 job id, $3
 * died at or after (ms), $4 died before (ms), $5 error substring (ILIKE
 * pattern, escaped by the caller), each null = any; $6/$7 keyset (finished
 * ms, id) of the previous page's last run (null: first page); $8 limit.
 */
export const LIST_DEAD_RUNS = `
SELECT ${RUN_COLUMNS} FROM runs r
WHERE r.status = 'dead' AND ($1::text IS NULL OR r.queue = $1) AND ($2::uuid IS NULL OR r.job_id = $2)
  AND ($3::int8 IS NULL OR r.finished_at >= to_timestamp($3::int8 / 1000.0))
  AND ($4::int8 IS NULL OR r.finished_at < to_timestamp($4::int8 / 1000.0))
  AND ($5::text IS NULL OR r.error ILIKE $5)
  AND ($6::int8 IS NULL OR (r.finished_at, r.id) < (to_timestamp($6::int8 / 1000.0), $7::int8))
  AND ($9::text IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.id = r.job_id AND j.namespace = $9))
ORDER BY r.finished_at DESC, r.id DESC LIMIT $8`;

/** attemptsOf — every attempt of one occurrence (a job's runs sharing an idempotency key), oldest first. $1 job id, $2 key. */
export const ATTEMPTS_OF = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.job_id = $1 AND r.idempotency_key = $2 ORDER BY r.attempt, r.id`;

/**
 * replayRuns — dead runs → a new run each (attempt 1 of a new occurrence,
 * due now, origin 'replay', replay_of the dead run); a one-shot job that was
 * dead is active again. A dead run is replayed at most once (runs_replay_of).
 * $1 dead run ids int8[]. Returns the new runs.
 */
export const REPLAY_RUNS = `
WITH dead AS (
  SELECT d.id, d.job_id, d.shard, d.queue, d.priority FROM runs d WHERE d.id = ANY($1::int8[]) AND d.status = 'dead'
), ins AS (
  INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key, origin, replay_of)
  SELECT job_id, shard, queue, priority, 1, 'scheduled', date_trunc('milliseconds', now()), job_id || ':replay:' || id, 'replay', id
  FROM dead ORDER BY id
  ON CONFLICT (replay_of) WHERE replay_of IS NOT NULL DO NOTHING
  RETURNING id, job_id, shard, priority, replay_of, (extract(epoch FROM due_at) * 1000)::int8 AS due_at_ms
), revive AS (
  UPDATE jobs j SET status = 'active', updated_at = now()
  FROM ins WHERE j.id = ins.job_id AND j.shard = ins.shard AND j.status = 'dead' AND j.kind = 'once'
  RETURNING j.id
)
SELECT id, shard, priority, replay_of, due_at_ms FROM ins`;
