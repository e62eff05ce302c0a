/*
 * A batch of deliveries (answers, hand-offs) as the statements that write
 * them read it: `$1` run ids int8[], `$2` fences int8[], `$3` deliveries
 * int[], `$4` shards int[], `$5` hand-off times int8[] (epoch ms, null =
 * unknown), and any further parallel arrays.
 *
 * The batch's runs are found and locked one by one through the primary key
 * (`hit`), then written. Joined plainly (`UPDATE runs r …
 * FROM unnest(…) d WHERE r.id = d.id AND r.status = 'fired' …`), the plan
 * depended on the statistics of `runs.status`: once ANALYZE had last run
 * before a burst fired, Postgres estimated one 'fired' run, scanned every
 * fired run and compared each with every delivery of the batch — 2,000
 * Completes against 20,000 fired runs took 8.7 s; answers queued, leases ran
 * out, and redeliveries buried the daemon (bench/README.md, "Recurring
 * jobs"). A merge join over the whole primary key was the other bad plan. A
 * LATERAL lookup cannot be turned around, so a batch costs its size whatever
 * the statistics say. The arrays are read through sub-selects so that the
 * planner does not know the batch's size (it assumes a few rows): knowing
 * 2,000, it preferred to hash the batch against a sequential scan of `runs`
 * for every batch, which on a table of 75,000 runs took most of a core at
 * 5,000 answers/s. The lock
 * (FOR NO KEY UPDATE, as the write takes anyway) re-checks `cond` on a run
 * changed concurrently and keeps it unchanged until the write.
 */

/** The batch's columns, as `d`. */
const DELIVERY_COLUMNS = 'id, fence, deliveries, shard, sent_at';

/** More parallel arrays and their column names, e.g. `, $6::bytea[]` and `, output`. */
export interface ExtraArrays {
  arrays: string;
  columns: string;
}

const NO_EXTRA: ExtraArrays = { arrays: '', columns: '' };

/** `d`: the batch, one row per delivery. */
export function batchRows(extra: ExtraArrays = NO_EXTRA): string {
  const arrays = `$1::int8[], $2::int8[], $3::int[], $4::int[], $5::int8[]${extra.arrays}`
    .split(', ')
    .map((a) => `(SELECT ${a})`)
    .join(', ');
  return `d AS (SELECT * FROM unnest(${arrays}) AS d(${DELIVERY_COLUMNS}${extra.columns}))`;
}

/** The lookup of the batch row `d`'s run, if it matches `cond`: one primary-key probe. */
export const runOf = (cond: string): string => `SELECT 1 FROM runs r WHERE r.id = d.id AND r.shard = d.shard AND r.shard = ANY($4::int[]) AND ${cond}`;

/**
 * `hit`: the batch rows whose run matched `cond` (on `r`, the run, and `d`,
 * the batch row) when looked up and locked.
 * `skipLocked`: a run whose row another transaction holds is left out of
 * `hit` instead of waited for (COMPLETE_RUNS: one lock held by a session gone
 * silent would hold back every answer of the batch). The caller tells such a
 * run from a superseded one (COMPLETE_LOCKED), and tries it again.
 */
export function deliveryBatch(cond: string, extra: ExtraArrays = NO_EXTRA, skipLocked = false): string {
  return `${batchRows(extra)},
hit AS MATERIALIZED (
  SELECT d.* FROM d CROSS JOIN LATERAL (
    ${runOf(cond)}
    FOR NO KEY UPDATE${skipLocked ? ' SKIP LOCKED' : ''}) found)`;
}

/**
 * The write's match: the run `hit` found and locked (`d` is the `hit` row),
 * by key. Not by the tuple id: a run changed after the statement's snapshot
 * (a heartbeat, a hand-off record) is locked at its newest version, which a
 * TID match would miss, refusing a current delivery's answer. The lock keeps
 * `cond` true until the write; the batch's hidden size keeps the lookup a
 * primary-key probe per row.
 */
export const IS_HIT = 'r.id = d.id AND r.shard = d.shard AND r.shard = ANY($4::int[])';

/** The delivery `d` names is the run's current one: still fired, same fence, same hand-out. */
export const IS_CURRENT_DELIVERY = `r.status = 'fired' AND r.fence = d.fence AND r.deliveries = d.deliveries`;
