-- 0011: room for the step path's updates to be HOT (no index entry).
--
-- A step's row is updated as its parents finish (the fan-in counter) and
-- when it succeeds; neither touches an indexed column, so with room on the
-- page both are HOT (no index entry). Affects pages written from now on.
ALTER TABLE workflow_steps SET (fillfactor = 60);

-- 0005 made a one-shot job's completion HOT (its status was in no index);
-- 0006's materialiser index named status in its predicate, which made every
-- status change of every job write an entry in each of the jobs' indexes
-- again (a workflow step's job: two, one of them unique). The materialiser's
-- scan filters on status itself; the index keeps recurring jobs only — and
-- only those that may fire again: a cancelled job's next_fire_at is cleared
-- (CANCEL_JOB does so from now on; here for those cancelled before). Paused
-- jobs keep theirs (resume needs it) and are read and skipped by each pass.
-- The index is rebuilt in this migration's transaction: jobs is locked
-- for writes while it builds.
UPDATE jobs SET next_fire_at = NULL WHERE status IN ('cancelled', 'completed', 'dead') AND next_fire_at IS NOT NULL;
DROP INDEX jobs_next_fire;
CREATE INDEX jobs_next_fire ON jobs (shard, next_fire_at) WHERE next_fire_at IS NOT NULL;
