-- 0006: recurring jobs (cron and interval) and the life of their runs.
--
-- A recurring job keeps its rule in `recurrence` (cadence, bounds, jitter,
-- limit, catch-up; daemon/recurring/recurrence.ts reads it) and the nominal
-- time of its next occurrence not yet made a run in `next_fire_at`. The
-- shard's owner turns occurrences into runs ahead of time and advances
-- `next_fire_at` in the same fenced transaction (daemon/recurring/materialiser.ts).
-- One-shot jobs have kind 'once', no recurrence and no next_fire_at.
ALTER TABLE jobs
  ADD COLUMN kind text NOT NULL DEFAULT 'once' CHECK (kind IN ('once', 'cron', 'interval')),
  ADD COLUMN recurrence jsonb,
  -- What a run does when an earlier run of the job is still fired. The claim
  -- reads it, so it is a column; one-shot jobs never overlap ('allow_all').
  ADD COLUMN overlap text NOT NULL DEFAULT 'allow_all'
    CHECK (overlap IN ('skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all')),
  ADD COLUMN next_fire_at timestamptz,
  -- Occurrences made into runs so far (the limit counts these).
  ADD COLUMN occurrences int NOT NULL DEFAULT 0,
  -- Occurrences older than the catch-up window (or coalesced by fire_once):
  -- counted all, and recorded as 'missed' runs up to a cap per pass.
  ADD COLUMN missed_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN pause_note text;

ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
  CHECK (status IN ('active', 'paused', 'completed', 'dead', 'cancelled'));

-- The materialiser's scan: active recurring jobs of a shard by next occurrence.
CREATE INDEX jobs_next_fire ON jobs (shard, next_fire_at) WHERE status = 'active' AND next_fire_at IS NOT NULL;
-- No index for ListJobs' queue filter: it pages by id (the primary key), and
-- an index on every job would cost the ingest path for a listing.

-- Runs of recurring jobs carry the occurrence's nominal time (before jitter)
-- and `origin`: 'schedule' (an occurrence), 'trigger', 'trigger_forced'
-- (ignores the overlap policy), 'backfill', 'replay'. NULL for a one-shot
-- job's runs, which keeps them out of the overlap index below.
ALTER TABLE runs
  ADD COLUMN nominal_at timestamptz,
  ADD COLUMN origin text;

-- 'skipped': not fired, an earlier run was still running (overlap skip).
-- 'buffered': waits for the running one to finish (buffer_one / buffer_all).
-- 'missed': an occurrence nothing could fire in time, outside the catch-up window.
ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('scheduled', 'fired', 'completed', 'failed', 'dead', 'cancelled', 'skipped', 'buffered', 'missed'));

-- No occurrence is made twice — not by a failover, a zombie owner or two
-- daemons that disagree about ownership: (job, nominal time) is unique among
-- first attempts (retries repeat the nominal time of their occurrence).
CREATE UNIQUE INDEX runs_occurrence ON runs (job_id, nominal_at) WHERE nominal_at IS NOT NULL AND attempt = 1;
-- Buffered runs waiting for their job's running one to finish.
CREATE INDEX runs_buffered ON runs (shard, job_id, nominal_at) WHERE status = 'buffered';
-- The overlap check: is a run of this recurring job running (fired, or a
-- scheduled retry), waiting in the buffer, or about to start?
CREATE INDEX runs_job_live ON runs (job_id, status) WHERE status IN ('scheduled', 'fired', 'buffered') AND origin IS NOT NULL;
