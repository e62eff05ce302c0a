-- 0001: jobs, runs, shards. Released migrations are never edited.

-- One row: fixed cluster parameters chosen at init.
CREATE TABLE cluster (
  id          int PRIMARY KEY CHECK (id = 1),
  shard_count int NOT NULL CHECK (shard_count BETWEEN 1 AND 65536),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Shard ownership as Postgres sees it. `fence` only moves forward: every
-- fenced write checks it (invariant I-1). `lease_expires_at` is used only by
-- the Postgres lease backend (embedded mode); Redis leases live in Redis.
CREATE TABLE shards (
  shard            int PRIMARY KEY,
  fence            bigint NOT NULL DEFAULT 0,
  owner            text,
  acquired_at      timestamptz,
  lease_expires_at timestamptz
);

CREATE TABLE jobs (
  id                 uuid PRIMARY KEY,
  namespace          text NOT NULL,
  queue              text NOT NULL,
  shard              int NOT NULL,
  payload            bytea NOT NULL,
  priority           int NOT NULL DEFAULT 0,
  dedupe_key         text,
  delivery           text NOT NULL CHECK (delivery IN ('at_least_once', 'at_most_once')),
  max_attempts       int NOT NULL,
  initial_backoff_ms int NOT NULL,
  max_backoff_ms     int NOT NULL,
  lease_ms           int NOT NULL,
  status             text NOT NULL CHECK (status IN ('active', 'completed', 'dead', 'cancelled')),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX jobs_dedupe ON jobs (namespace, dedupe_key) WHERE dedupe_key IS NOT NULL;

-- One row per attempt. `fence` and `deliveries` identify the current hand-out:
-- a worker's answer must echo both, so a superseded delivery changes nothing.
CREATE TABLE runs (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id           uuid NOT NULL REFERENCES jobs (id),
  shard            int NOT NULL,
  queue            text NOT NULL,
  priority         int NOT NULL DEFAULT 0,
  attempt          int NOT NULL DEFAULT 1,
  status           text NOT NULL CHECK (status IN ('scheduled', 'fired', 'completed', 'failed', 'dead', 'cancelled')),
  due_at           timestamptz NOT NULL,
  fired_at         timestamptz,
  lag_ms           double precision,
  fence            bigint NOT NULL DEFAULT 0,
  deliveries       int NOT NULL DEFAULT 0,
  lease_expires_at timestamptz,
  worker_id        text,
  idempotency_key  text NOT NULL,
  error            text,
  progress         double precision,
  checkpoint       bytea,
  finished_at      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
-- The loader's scan: scheduled runs of owned shards by due time.
CREATE INDEX runs_due ON runs (shard, due_at) WHERE status = 'scheduled';
-- The redelivery reaper: fired runs whose lease ran out.
CREATE INDEX runs_lease ON runs (shard, lease_expires_at) WHERE status = 'fired' AND lease_expires_at IS NOT NULL;
CREATE INDEX runs_job ON runs (job_id, attempt);
CREATE INDEX runs_queue_status ON runs (queue, status, id);
