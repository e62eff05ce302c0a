/**
 * Runs named by id ($1 int8[]), looked up one by one: the FROM item of every
 * fire-path statement that takes a batch of run ids (the claim, its
 * held-back lookup, the overlap check and the status check of missed runs).
 *
 * Written as a filter (`WHERE r.id = ANY($1) AND …`), the plan depends on
 * the statistics: a queue, a status or an origin Postgres had not seen yet
 * (a fresh install, a new queue's burst) made it read a whole index —
 * runs_queue_status, runs_job_live, runs_due — and filter out all but the
 * batch, per call (test/integration/plan-shapes.test.ts). A LATERAL lookup
 * by `k.id` cannot be turned around, and OFFSET 0 keeps Postgres from
 * flattening it into a join it could reorder, or pushing a condition put
 * outside it into it. The ids come through a sub-select (the planner does
 * not know the batch's size) and in id order (rows locked or written after
 * are taken in the same order by every statement: no deadlock).
 *
 * `lookup` is a SELECT over `runs r` with `r.id = k.id` in its WHERE; its
 * rows are named `as`.
 */
export function runsById(lookup: string, as: string): string {
  return `(SELECT id FROM unnest((SELECT $1::int8[])) AS u(id) ORDER BY id) AS k CROSS JOIN LATERAL (
    ${lookup}
    OFFSET 0) ${as}`;
}
