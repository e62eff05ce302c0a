-- 0012: dead runs' time of death in whole milliseconds.
--
-- ListDeadRuns pages by (finished_at, id) with a token in milliseconds and
-- filters by since_ms/until_ms against the milliseconds a run reports; a
-- death stored to the microsecond repeated or skipped runs at page
-- boundaries. FAIL_RUN now records deaths in whole milliseconds; this brings
-- the dead runs recorded before it in line. Only dead runs: other statuses
-- are not paged by finished_at.
UPDATE runs SET finished_at = date_trunc('milliseconds', finished_at)
WHERE status = 'dead' AND finished_at <> date_trunc('milliseconds', finished_at);
