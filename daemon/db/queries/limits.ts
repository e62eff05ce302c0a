/* Per-queue delivery limits (table queue_limits, migration 0007). */

export interface QueueLimitsRow {
  queue: string;
  max_in_flight: number;
  max_per_second: number;
}

/** listQueueLimits — every limited queue. */
export const LIST_QUEUE_LIMITS = `SELECT queue, max_in_flight, max_per_second FROM queue_limits ORDER BY queue`;

/** setQueueLimits — upsert a queue's limits. $1 queue, $2 max in flight, $3 max per second. */
export const SET_QUEUE_LIMITS = `
INSERT INTO queue_limits (queue, max_in_flight, max_per_second) VALUES ($1, $2, $3)
ON CONFLICT (queue) DO UPDATE SET max_in_flight = $2, max_per_second = $3, updated_at = now()
RETURNING queue, max_in_flight, max_per_second`;

/** clearQueueLimits — a queue is no longer limited. $1 queue. */
export const CLEAR_QUEUE_LIMITS = `DELETE FROM queue_limits WHERE queue = $1`;

/**
 * lockQueuePermits — the queue's advisory lock, to the end of the
 * transaction. A statement of its own: ACQUIRE_PERMIT must take its snapshot
 * after the lock, or it would not see a permit committed while it waited.
 * $1 queue.
 */
export const LOCK_QUEUE_PERMITS = `SELECT pg_advisory_xact_lock(hashtext('timelane_queue_permit'), hashtext($1))`;

/**
 * acquirePermit — one permit of a limited queue, under the queue's advisory
 * lock (LOCK_QUEUE_PERMITS first, in the same transaction, so the count and
 * the insert cannot interleave with another daemon's): lapsed permits and old rate counters go, then the
 * permit is refused when the queue is full (unless this run holds one), or
 * when this second's budget is spent; else it is recorded. $1 queue, $2 run
 * id, $3 now ms, $4 permit end ms, $5 max in flight (0: none), $6 max per
 * second (0: none). Returns 'ok', 'shared' (this run held a live permit
 * already: granted, not the caller's to give back), 'in_flight' or 'rate'.
 * Run in a transaction (the advisory lock is held to its end).
 */
export const ACQUIRE_PERMIT = `
WITH lapsed AS (DELETE FROM queue_permits p WHERE p.queue = $1 AND p.until <= to_timestamp($3::int8 / 1000.0)),
old_rate AS (DELETE FROM queue_rate r WHERE r.queue = $1 AND r.second < $3::int8 / 1000 - 1),
held AS (SELECT EXISTS (SELECT 1 FROM queue_permits h WHERE h.queue = $1 AND h.run_id = $2 AND h.until > to_timestamp($3::int8 / 1000.0)) AS yes),
verdict AS (
  SELECT CASE
    WHEN $5::int > 0 AND NOT (SELECT yes FROM held)
         AND (SELECT count(*) FROM queue_permits c WHERE c.queue = $1 AND c.until > to_timestamp($3::int8 / 1000.0)) >= $5 THEN 'in_flight'
    WHEN $6::int > 0 AND coalesce((SELECT n FROM queue_rate r WHERE r.queue = $1 AND r.second = $3::int8 / 1000), 0) >= $6 THEN 'rate'
    WHEN $5::int > 0 AND (SELECT yes FROM held) THEN 'shared'
    ELSE 'ok' END AS v
), rate_in AS (
  INSERT INTO queue_rate (queue, second, n) SELECT $1, $3::int8 / 1000, 1 FROM verdict WHERE v IN ('ok', 'shared') AND $6::int > 0
  ON CONFLICT (queue, second) DO UPDATE SET n = queue_rate.n + 1
), permit_in AS (
  INSERT INTO queue_permits (queue, run_id, until) SELECT $1, $2, to_timestamp($4::int8 / 1000.0) FROM verdict WHERE v IN ('ok', 'shared') AND $5::int > 0
  ON CONFLICT (queue, run_id) DO UPDATE SET until = excluded.until
)
SELECT v FROM verdict`;

/** releasePermit — a delivery settled. $1 queue, $2 run id. */
export const RELEASE_PERMIT = `DELETE FROM queue_permits WHERE queue = $1 AND run_id = $2`;

/** releasePermits — permits of runs no longer fired (the sweeper). $1 queue, $2 run ids int8[]. */
export const RELEASE_PERMITS = `DELETE FROM queue_permits WHERE queue = $1 AND run_id = ANY($2::int8[])`;

/** permitHolders — the runs holding a queue's permits (lapsed or not). $1 queue. */
export const PERMIT_HOLDERS = `SELECT run_id FROM queue_permits WHERE queue = $1`;

/**
 * stalePermitHolders — of the runs given, those no longer fired (answered,
 * cancelled, ended at their lease) or gone: their permits are stale, since
 * a run never becomes fired again. Not a transition. $1 run ids int8[].
 */
export const STALE_PERMIT_HOLDERS = `
SELECT h.id FROM unnest($1::int8[]) AS h(id)
WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = h.id AND r.status = 'fired')`;

