-- 0007: the life of a run — who worked on it, replays, cooperative cancel.
--
-- `worker_id`: the worker (Subscribe.worker_id) that last heartbeated or
-- failed the run. `replay_of`: ReplayRuns' new run points at the dead one it
-- replays (unique: a dead run is replayed at most once). `cancel_requested_at`:
-- CancelJob (or overlap cancel_other) asked the run's worker to stop; such a
-- run is never redelivered, and a Fail ends it 'cancelled'.
ALTER TABLE runs
  ADD COLUMN replay_of bigint,
  ADD COLUMN cancel_requested_at timestamptz;
CREATE UNIQUE INDEX runs_replay_of ON runs (replay_of) WHERE replay_of IS NOT NULL;
-- The reaper's look for runs asked to stop (EXPIRE_CANCELLED), every tick:
-- without it the statement joined every fired run to its job (400 ms at
-- 100,000 jobs).
CREATE INDEX runs_cancelling ON runs (shard) WHERE status = 'fired' AND cancel_requested_at IS NOT NULL;
-- Dead letters, newest first, per queue.
CREATE INDEX runs_dead ON runs (queue, finished_at DESC, id DESC) WHERE status = 'dead';


-- Per-queue limits, enforced by every daemon's delivery hub across the
-- cluster (through Redis; through queue_permits below without Redis): at most
-- `max_in_flight` runs of the queue handed out and unanswered at once, and
-- at most `max_per_second` handed out per second. 0 = no limit. Daemons
-- re-read this table every second.
CREATE TABLE queue_limits (
  queue          text PRIMARY KEY,
  max_in_flight  int NOT NULL DEFAULT 0 CHECK (max_in_flight >= 0),
  max_per_second int NOT NULL DEFAULT 0 CHECK (max_per_second >= 0),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Permits of limited queues for daemons without Redis (several daemons with
-- Postgres leases and pinned shards share them here): one row per run
-- handed out and unanswered, lapsing at `until`; one counter per queue and
-- second. Taken under a per-queue advisory lock (queries/limits.ts).
CREATE UNLOGGED TABLE queue_permits (
  queue  text NOT NULL,
  run_id bigint NOT NULL,
  until  timestamptz NOT NULL,
  PRIMARY KEY (queue, run_id)
);
CREATE UNLOGGED TABLE queue_rate (
  queue  text NOT NULL,
  second bigint NOT NULL,
  n      int NOT NULL,
  PRIMARY KEY (queue, second)
);
