-- 0013: fired runs without a lease (AT_MOST_ONCE), by claim time.
--
-- The redelivery reaper ends workflow steps delivered at most once that were
-- not answered within their job's lease after the claim
-- (EXPIRE_UNANSWERED_STEPS). At-least-once runs hold a lease while fired, so
-- they never enter this index; it holds only at-most-once runs in flight.
CREATE INDEX runs_unleased ON runs (shard, claimed_at) WHERE status = 'fired' AND lease_expires_at IS NULL;
