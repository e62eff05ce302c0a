-- 0014: the queues of recurring jobs, for ListQueues.
--
-- ListQueues walks the distinct queue names of runs (a skip scan of
-- runs_queue_status). A recurring job whose next occurrence is not made a
-- run yet (a daily job, made within the window before its time) has no run:
-- its queue is found through this index. Partial: one-shot jobs, every
-- ScheduleBatch's rows, never enter it, so ingest pays nothing for it.
CREATE INDEX jobs_recurring_queue ON jobs (queue) WHERE kind <> 'once';
