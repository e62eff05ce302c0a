/*
 * The loader's queries. Times are epoch ms (runs are kept at ms precision).
 */
import { runsById } from './runs-by-id.js';

/**
 * loadWindowPage — one page of scheduled runs of the given shards due in
 * (from, to], earliest first, after a keyset. $1 shards int[], $2 from ms
 * (exclusive; null = no lower bound: the repair scan and a shard's first load),
 * $3 to ms (inclusive), $4 keyset due ms and $5 keyset id (both null for the
 * first page), $6 page size. Paged so a large window never arrives as one
 * result that blocks the event loop the fire timer runs on.
 *
 * Cost: with several shards the ORDER BY cannot follow the (shard, due_at)
 * index, so Postgres reads and sorts every row in (from, to] for each page.
 * The loader therefore asks for short due-time slices (to close to from), each
 * holding about one page: a page costs O(page), not O(rest of the window)
 * (250 ms per page at 1M runs in the window when `to` was the window's end).
 *
 * One row, one text column: `page` = "id,shard,priority,due_ms,id,…", four
 * integers per run in (due_at, id) order (null: no run). A row per run cost
 * the daemon ~0.6 µs of pg row parsing each (four strings, an array, a type
 * parser call per field) — a third of a window rebuild's JavaScript time.
 */
export const LOAD_WINDOW_PAGE = `
SELECT string_agg(concat_ws(',', p.id, p.shard, p.priority, p.due_at_ms), ',' ORDER BY p.due_at, p.id) AS page
FROM (
  SELECT r.id, r.shard, r.priority, r.due_at, (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms
  FROM runs r
  WHERE r.shard = ANY($1::int[]) AND r.status = 'scheduled'
    AND ($2::int8 IS NULL OR r.due_at > to_timestamp($2::int8 / 1000.0))
    AND r.due_at <= to_timestamp($3::int8 / 1000.0)
    AND ($4::int8 IS NULL OR (r.due_at, r.id) > (to_timestamp($4::int8 / 1000.0), $5::int8))
  ORDER BY r.due_at, r.id
  LIMIT $6
) p`;

/** A LOAD_WINDOW_PAGE row: four integers per run (id, shard, priority, due ms), or null for none. */
export interface WindowPage {
  page: string | null;
}

/**
 * scheduledStatus — which of these runs are still scheduled, and when. $1 run
 * ids int8[], $2 their shards int[]. Looked up by id (runsById): as a filter,
 * with statistics that had seen few scheduled runs, Postgres read every
 * scheduled run of the shards through runs_due.
 */
export const SCHEDULED_STATUS = `
SELECT found.* FROM ${runsById(`SELECT r.id, r.shard, r.priority, (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms
    FROM runs r WHERE r.id = k.id AND r.shard = ANY($2::int[]) AND r.status = 'scheduled'`, 'found')}`;

/** shardFences — current fences. $1 shards int[]. */
export const SHARD_FENCES = `SELECT shard, fence FROM shards WHERE shard = ANY($1::int[])`;

/** dbClock — Postgres's clock, to measure skew against ours. */
export const DB_CLOCK = `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms`;

export interface WindowRow {
  id: number;
  shard: number;
  priority: number;
  due_at_ms: number;
}
