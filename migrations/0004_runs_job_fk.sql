-- 0004: drop the foreign key runs.job_id → jobs(id).
--
-- It cost an RI trigger per inserted run (a `SELECT … FOR KEY SHARE` on the
-- job): about a sixth of Postgres's time per scheduled job, on the ingest
-- path that bounds ScheduleBatch throughput. What it guarded cannot happen:
-- a run is only ever inserted by a statement that inserts its job
-- (insertJobs) or reads it from an existing run of that job (retries), and
-- jobs are never deleted. Temporal's SQL schemas carry no foreign keys for
-- the same reason. runs_job (job_id, attempt) still serves lookups by job.
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_job_id_fkey;
