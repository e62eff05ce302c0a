-- 0013: workflow steps in flight without a lease (AT_MOST_ONCE).
--
-- The redelivery reaper ends workflow steps delivered at most once that were
-- not answered within their job's lease (EXPIRE_UNANSWERED_STEPS). At-least-
-- once runs hold a lease while fired, and plain at-most-once runs are not
-- looked at, so neither enters this index: it holds only at-most-once steps
-- in flight, and stays small.
CREATE INDEX runs_unleased_steps ON runs (shard) WHERE status = 'fired' AND lease_expires_at IS NULL AND origin = 'workflow';
