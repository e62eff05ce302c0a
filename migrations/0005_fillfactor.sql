-- 0005: leave room on each page for the row's next version.
--
-- A one-shot job's row is updated once (active → completed) and a run's
-- three times (scheduled → fired → completed, plus heartbeats). With full
-- pages every new version lands on another page; with room left it can stay
-- on the same page, and for jobs (whose status is in no index) the update is
-- HOT: no index entry at all. Affects pages written from now on.
ALTER TABLE jobs SET (fillfactor = 70);
ALTER TABLE runs SET (fillfactor = 80);
