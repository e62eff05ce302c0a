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
-- Dead letters, newest first, per queue.
CREATE INDEX runs_dead ON runs (queue, finished_at DESC, id DESC) WHERE status = 'dead';


-- Per-queue limits, enforced by every daemon's delivery hub across the
-- cluster (through Redis; in-process without Redis): at most
-- `max_in_flight` runs of the queue handed out and unanswered at once, and
-- at most `max_per_second` handed out per second. 0 = no limit. Daemons
-- re-read this table every second.
CREATE TABLE queue_limits (
  queue          text PRIMARY KEY,
  max_in_flight  int NOT NULL DEFAULT 0 CHECK (max_in_flight >= 0),
  max_per_second int NOT NULL DEFAULT 0 CHECK (max_per_second >= 0),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
