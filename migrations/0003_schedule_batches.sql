-- 0003: batch idempotency keys for ScheduleBatch (`batch_id`). One row per
-- committed batch that named a key, inserted first in the batch's own
-- transaction: a retry of a committed batch finds the row and replays the
-- reply instead of scheduling again; a concurrent retry waits on the key.
-- The batch's jobs are found again by their ids, which are derived from
-- (namespace, batch_id, request index) (daemon/scheduling/batch-key.ts), so
-- nothing per job is stored here. Rows older than 24 hours are pruned a few
-- at a time by later keyed batches.
CREATE TABLE schedule_batches (
  namespace  text NOT NULL,
  batch_id   text NOT NULL,
  -- How many requests the batch held: a retry with another count is refused.
  requests   int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, batch_id)
);
CREATE INDEX schedule_batches_created ON schedule_batches (created_at);
