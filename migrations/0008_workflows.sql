-- 0008: workflows — versioned DAGs of steps, each step run by the engine.
--
-- A workflow run lives on one shard (`shard`, from its id): its steps' jobs
-- and runs carry that shard, so the shard's owner fires them and its repair
-- pass (fenced on that shard) is the only periodic writer of its steps.
-- Every step transition is one conditional statement
-- (daemon/db/queries/workflows.ts); every transaction that changes a
-- workflow run's steps first locks its workflow_runs row (FOR UPDATE), so a
-- run's transitions are serialised and the per-run limit on steps in flight
-- holds. Lock order everywhere: workflow_runs → runs → workflow_steps.

-- Named, versioned definitions (PutWorkflow). A run keeps the steps it
-- started with (copied into workflow_steps), whatever later versions say.
CREATE TABLE workflow_definitions (
  namespace  text NOT NULL,
  name       text NOT NULL,
  version    int NOT NULL CHECK (version >= 1),
  -- The validated definition (daemon/workflows/definition.ts, stored form).
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace, name, version)
);

CREATE TABLE workflow_runs (
  id            uuid PRIMARY KEY,
  namespace     text NOT NULL,
  name          text NOT NULL,
  -- The definition's version; 0 for a definition given inline to StartWorkflow.
  version       int NOT NULL,
  shard         int NOT NULL,
  state         text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'cancelled')),
  -- Most steps in flight (running) at once; 0 = no limit.
  max_in_flight int NOT NULL DEFAULT 0 CHECK (max_in_flight >= 0),
  -- Root steps are due at this instant (StartWorkflow's start time).
  start_at      timestamptz NOT NULL,
  -- RetryWorkflowRun calls so far.
  retries       int NOT NULL DEFAULT 0,
  -- Whole milliseconds: ListWorkflowRuns pages by (created_at, id) in ms.
  created_at    timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX workflow_runs_list ON workflow_runs (namespace, created_at DESC, id DESC);
-- The repair pass: running workflow runs of a shard.
CREATE INDEX workflow_runs_live ON workflow_runs (shard) WHERE state = 'running';

-- One row per (workflow run, step). States (daemon/workflows/step-states.ts):
-- pending → ready → running → succeeded | failed | cancelled; pending/ready →
-- upstream_failed | cancelled. `waiting` counts parents not yet succeeded
-- (the fan-in counter): the statement that makes it 0 makes the step ready.
CREATE TABLE workflow_steps (
  workflow_run_id    uuid NOT NULL,
  step               text NOT NULL,
  shard              int NOT NULL,
  -- Topological position: ready steps start in this order.
  position           int NOT NULL,
  parents            text[] NOT NULL,
  children           text[] NOT NULL,
  waiting            int NOT NULL CHECK (waiting >= 0),
  state              text NOT NULL
    CHECK (state IN ('pending', 'ready', 'running', 'succeeded', 'failed', 'upstream_failed', 'cancelled')),
  -- Times the step was started (a partial re-run starts it again: generation + 1).
  generation         int NOT NULL DEFAULT 0,
  -- The job of the current generation (its runs are the step's attempts).
  job_id             uuid,
  -- What each generation's job is made of.
  queue              text NOT NULL,
  payload            bytea NOT NULL,
  priority           int NOT NULL,
  delivery           text NOT NULL,
  max_attempts       int NOT NULL,
  initial_backoff_ms int NOT NULL,
  max_backoff_ms     int NOT NULL,
  lease_ms           int NOT NULL,
  -- Complete's output (size-limited), handed to the children with their delivery.
  output             bytea,
  error              text,
  ready_at           timestamptz,
  started_at         timestamptz,
  finished_at        timestamptz,
  PRIMARY KEY (workflow_run_id, step)
);
CREATE UNIQUE INDEX workflow_steps_job ON workflow_steps (job_id) WHERE job_id IS NOT NULL;

-- A step's job knows its step. The unique key makes a step's job — and so
-- its run — at most once per (workflow run, step, generation): a second
-- start of the same generation (a redelivered Complete, a zombie, a repair
-- racing an answer) inserts nothing. The parents' outputs travel with the job
-- (claimed with it, delivered with the run).
ALTER TABLE jobs
  ADD COLUMN workflow_run_id uuid,
  ADD COLUMN workflow_step text,
  ADD COLUMN workflow_generation int,
  ADD COLUMN parent_steps text[],
  ADD COLUMN parent_outputs bytea[];
CREATE UNIQUE INDEX jobs_workflow_step ON jobs (workflow_run_id, workflow_step, workflow_generation) WHERE workflow_run_id IS NOT NULL;
-- Runs of workflow steps have origin 'workflow' (answers tell them apart by it).
