/**
 * Named SQL for shard fences and the Postgres lease (table `shards`, see
 * migrations/0001_init.sql). Every state transition is one conditional
 * statement: a fence only moves forward, and a lease is only extended or
 * released by the acquisition (fence) that took it.
 */

/** Row shape returned by the statements below that return `fence`. */
export interface FenceRow {
  fence: number;
}

/**
 * recordFence — records a token issued elsewhere (Redis INCR), forward only.
 * $1 shard int, $2 new fence int8, $3 owner (member id) text.
 * Returns the row only when $2 is above the recorded fence; zero rows means the
 * token is not new (stale holder, or a Redis counter that forgot: I-2).
 */
export const RECORD_FENCE = `
UPDATE shards SET fence = $2, owner = $3, acquired_at = now()
 WHERE shard = $1 AND fence < $2
RETURNING fence`;

/** selectFence — the recorded fence of one shard. $1 shard int. Zero rows: no such shard. */
export const SELECT_FENCE = `SELECT fence FROM shards WHERE shard = $1`;

/**
 * pgAcquireLease — Postgres lease: takes the row when it is unowned, its lease
 * has expired by Postgres's clock, or it is already ours (a restarted member),
 * and issues the next fence in the same statement.
 * $1 shard int, $2 owner (member id) text, $3 ttl ms int.
 */
export const PG_ACQUIRE_LEASE = `
UPDATE shards
   SET fence = fence + 1, owner = $2, acquired_at = now(),
       lease_expires_at = now() + $3::int * interval '1 millisecond'
 WHERE shard = $1
   AND (owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= now() OR owner = $2)
RETURNING fence`;

/**
 * pgExtendLease — pushes a live lease's expiry to now() + ttl, only for the
 * acquisition that holds it and only while it has not expired.
 * $1 shard int, $2 fence int8, $3 owner text, $4 ttl ms int.
 */
export const PG_EXTEND_LEASE = `
UPDATE shards SET lease_expires_at = now() + $4::int * interval '1 millisecond'
 WHERE shard = $1 AND fence = $2 AND owner = $3 AND lease_expires_at > now()
RETURNING fence`;

/**
 * releaseShard — marks the shard free (owner and lease cleared) if the given
 * acquisition still holds it. Used by both backends. The fence stays: it
 * only ever moves forward. $1 shard int, $2 fence int8.
 */
export const RELEASE_SHARD = `
UPDATE shards SET owner = NULL, lease_expires_at = NULL
 WHERE shard = $1 AND fence = $2
RETURNING fence`;

/**
 * heldShard — SQL predicate for every fenced statement: the shard in `col` is
 * one of ours (`shards`, an int[] parameter) and its fence in Postgres is
 * still the one we hold (`fences`, int8[], parallel). The matching shard rows
 * are locked FOR SHARE until the transaction ends: a fence bump (a takeover)
 * waits for the statement, and a statement behind a bump re-checks and
 * matches nothing (I-1; Temporal's txExecuteShardLocked).
 *
 * An uncorrelated `= ANY(ARRAY(…))` is an InitPlan, run once per statement.
 * Joined as a row source instead (`FROM (…) f`), it was estimated at one row
 * and drove a nested loop: a claim of 2,000 runs on 64 shards read its runs
 * 64 times (548k buffers, 600 ms; 54k, 166 ms as an InitPlan).
 */
export function heldShard(col: string, shards: string, fences: string): string {
  return `${col} = ANY(ARRAY(
    SELECT s.shard FROM shards s JOIN unnest(${shards}::int[], ${fences}::int8[]) AS held(shard, fence)
      ON s.shard = held.shard AND s.fence = held.fence
    FOR SHARE OF s))`;
}

/** fenceOf — SQL expression: the fence we hold for the shard in `col` (one of `shards`), as the statement stamps it on a run. */
export function fenceOf(col: string, shards: string, fences: string): string {
  return `(${fences}::int8[])[array_position(${shards}::int[], ${col})]`;
}
