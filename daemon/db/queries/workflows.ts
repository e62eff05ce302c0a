/*
 * Workflows: definitions, workflow runs and their steps' transitions.
 *
 * Every step transition is ONE conditional statement (on the step's expected
 * state, and for an answer on the delivery's identity). Every transaction
 * that changes a workflow run's steps takes the run's row first
 * (LOCK_WORKFLOW_RUNS / LOCK_WORKFLOWS_OF_RUNS, ids in order), so a run's
 * transitions are serialised: the in-flight limit holds, and lock order is
 * always workflow_runs → runs → workflow_steps (no deadlock with a cancel).
 * The repair pass additionally holds its shards FOR SHARE at its fences, as
 * every periodic writer does (I-1), and so does a transaction that fires the
 * steps it starts (START_READY_STEPS).
 */

import { heldShard } from '../../coord/fence-queries.js';
import type { FiredRunRow } from './columns.js';
import { deliveryBatch, IS_CURRENT_DELIVERY, IS_HIT } from './delivery-batch.js';
import type { StepTrigger } from '../../workflows/definition.js';

const ms = (col: string): string => `(extract(epoch FROM ${col}) * 1000)::int8`;

/** States of a step (daemon/workflows/step-transitions.ts draws the machine). */
export type StepState = 'pending' | 'ready' | 'running' | 'succeeded' | 'failed' | 'upstream_failed' | 'cancelled';
export type WorkflowRunState = 'running' | 'succeeded' | 'failed' | 'cancelled';

// ------------------------------------------------------------ definitions ---

/**
 * putDefinition — a new version of a named definition, unless it equals the
 * latest one (then that version is answered, `created` false). $1 namespace,
 * $2 name, $3 definition jsonb. The caller holds the name's advisory lock.
 */
export const LATEST_DEFINITION = `
SELECT version, definition FROM workflow_definitions WHERE namespace = $1 AND name = $2 ORDER BY version DESC LIMIT 1`;

/** insertDefinition — $1 namespace, $2 name, $3 version, $4 definition jsonb. */
export const INSERT_DEFINITION = `
INSERT INTO workflow_definitions (namespace, name, version, definition) VALUES ($1, $2, $3, $4::jsonb)`;

/** lockDefinitionName — serialises PutWorkflow of one name (transaction-scoped). $1 namespace, $2 name. */
export const LOCK_DEFINITION_NAME = `SELECT pg_advisory_xact_lock(hashtextextended('timelane.workflow:' || $1 || ':' || $2, 0))`;

/** selectDefinition — $1 namespace, $2 name, $3 version (0 = latest). */
export const SELECT_DEFINITION = `
SELECT version, definition FROM workflow_definitions
WHERE namespace = $1 AND name = $2 AND ($3::int = 0 OR version = $3)
ORDER BY version DESC LIMIT 1`;

// ---------------------------------------------------------- creating runs ---

/**
 * insertWorkflowRuns — new workflow runs and every one of their steps, in
 * one statement: roots 'ready', the others 'pending' waiting for all their
 * parents. Per run: $1 ids uuid[], $2 namespaces text[], $3 names text[],
 * $4 versions int[], $5 shards int[], $6 max in flight int[], $7 start
 * times (epoch ms) int8[]. Per step of every run: $8 its run (index into the
 * run arrays, from 1) int[], $9 names text[], $10 positions int[], $11
 * parents (each a JSON array of names) jsonb[], $12 children jsonb[], $13
 * queues text[], $14 payloads bytea[], $15 priorities int[], $16 deliveries
 * text[], $17 max attempts int[], $18 initial backoffs int[], $19 max
 * backoffs int[], $20 leases int[], $21 triggers text[]. Returns the runs created with their
 * creation time; a run whose id exists (a recurring start's second attempt,
 * a dedupe key used before) is not returned, and nothing of it is written.
 * Ids must be distinct within one call.
 */
export const INSERT_WORKFLOW_RUNS = `
WITH w AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::int8[])
    WITH ORDINALITY AS w(id, namespace, name, version, shard, max_in_flight, start_at_ms, i)
), wf AS (
  INSERT INTO workflow_runs (id, namespace, name, version, shard, state, max_in_flight, start_at)
  SELECT id, namespace, name, version, shard, 'running', max_in_flight, to_timestamp(start_at_ms / 1000.0) FROM w ORDER BY id
  ON CONFLICT (id) DO NOTHING
  RETURNING id, shard, created_at
), steps AS (
  INSERT INTO workflow_steps (workflow_run_id, step, shard, position, parents, children, waiting, state, ready_at,
    queue, payload, priority, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms, trigger)
  SELECT wf.id, t.step, wf.shard, t.position,
    ARRAY(SELECT jsonb_array_elements_text(t.parents)), ARRAY(SELECT jsonb_array_elements_text(t.children)),
    jsonb_array_length(t.parents), CASE WHEN jsonb_array_length(t.parents) = 0 THEN 'ready' ELSE 'pending' END,
    CASE WHEN jsonb_array_length(t.parents) = 0 THEN now() END,
    t.queue, t.payload, t.priority, t.delivery, t.max_attempts, t.initial_backoff_ms, t.max_backoff_ms, t.lease_ms, t.trigger
  FROM unnest($8::int[], $9::text[], $10::int[], $11::jsonb[], $12::jsonb[], $13::text[], $14::bytea[], $15::int[], $16::text[],
              $17::int[], $18::int[], $19::int[], $20::int[], $21::text[])
    AS t(run, step, position, parents, children, queue, payload, priority, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms,
         trigger)
  JOIN w ON w.i = t.run JOIN wf ON wf.id = w.id
)
SELECT id, ${ms('created_at')} AS created_at_ms FROM wf`;

// ---------------------------------------------------------------- locking ---

/** lockWorkflowRuns — the rows of these workflow runs, in id order, FOR UPDATE. $1 ids uuid[]. */
export const LOCK_WORKFLOW_RUNS = `
SELECT w.id, w.state FROM workflow_runs w WHERE w.id = ANY($1::uuid[]) ORDER BY w.id FOR UPDATE`;

/**
 * lockWorkflowsOfRuns — the workflow runs that these engine runs are steps
 * of, in id order, FOR UPDATE (the first statement of an answer's
 * transaction, before the runs themselves are touched). $1 run ids int8[],
 * $2 shards int[]. Returns the workflow run ids.
 */
export const LOCK_WORKFLOWS_OF_RUNS = `
SELECT w.id FROM workflow_runs w
WHERE w.id IN (SELECT j.workflow_run_id FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard
               WHERE r.id = ANY($1::int8[]) AND r.shard = ANY($2::int[]) AND r.origin = 'workflow')
ORDER BY w.id FOR UPDATE OF w`;

// ------------------------------------------------------------ transitions ---

/**
 * The fan-in, after a CTE `done` of steps that just succeeded (workflow_run_id,
 * children): each child's `waiting` drops by the number of its parents in
 * `done`, and a child whose count reaches 0 becomes ready. Children of a
 * cancelled or failed run are not pending any more, and are left alone.
 */
const FAN_IN = `released AS (
  SELECT workflow_run_id, child, count(*)::int AS n FROM done, unnest(done.children) AS child GROUP BY workflow_run_id, child
), children AS (
  UPDATE workflow_steps c SET waiting = c.waiting - r.n,
    state = CASE WHEN c.waiting - r.n = 0 THEN 'ready' ELSE 'pending' END,
    ready_at = CASE WHEN c.waiting - r.n = 0 THEN now() END
  FROM released r WHERE c.workflow_run_id = r.workflow_run_id AND c.step = r.child AND c.state = 'pending'
  RETURNING c.workflow_run_id, c.step, c.state
)`;

/**
 * completeSteps — a batch of Completes of step runs, in one statement: each
 * run that still matches its delivery fired → completed (COMPLETE_RUNS of
 * queries/dispatch.ts, for origin 'workflow'), its job → completed, its step
 * running → succeeded with its output (the current generation's job only: a
 * late Complete of an older generation changes nothing); and the fan-in
 * (FAN_IN). $1 run ids int8[], $2 fences int8[], $3 deliveries int[], $4 shards int[],
 * $5 hand-off times int8[] (null = unknown), $6 outputs bytea[] (null =
 * none). Returns the deliveries that matched, each with the workflow run
 * whose step it succeeded (null: the step had moved on); and a row per child
 * this made ready (id null, `ready_step` its name): START_READY_STEPS's
 * candidates.
 */
export const COMPLETE_STEPS = `
WITH ${deliveryBatch(`${IS_CURRENT_DELIVERY} AND r.origin = 'workflow'`, { arrays: ', $6::bytea[]', columns: ', output' })},
run_out AS (
  UPDATE runs r SET status = 'completed', finished_at = now(), lease_expires_at = NULL,
    fired_at = coalesce(r.fired_at, to_timestamp(d.sent_at::int8 / 1000.0), greatest(r.claimed_at, r.due_at)),
    lag_ms = coalesce(r.lag_ms, d.sent_at::int8 - extract(epoch FROM r.due_at) * 1000,
      greatest(0, (extract(epoch FROM r.claimed_at) - extract(epoch FROM r.due_at)) * 1000))
  FROM hit d WHERE ${IS_HIT}
  RETURNING r.id, r.job_id, r.shard, d.fence, d.deliveries, d.output
), job_out AS (
  UPDATE jobs SET status = 'completed', updated_at = now()
  FROM run_out WHERE jobs.id = run_out.job_id AND jobs.shard = run_out.shard AND jobs.status = 'active'
  RETURNING jobs.id
), done AS (
  UPDATE workflow_steps s SET state = 'succeeded', output = run_out.output, finished_at = now(), error = NULL
  FROM run_out WHERE s.job_id = run_out.job_id AND s.state = 'running'
  RETURNING s.workflow_run_id, s.job_id, s.children
), ${FAN_IN}
SELECT run_out.id, run_out.fence, run_out.deliveries, done.workflow_run_id, NULL::text AS ready_step
FROM run_out LEFT JOIN done ON done.job_id = run_out.job_id
UNION ALL
SELECT NULL, NULL, NULL, children.workflow_run_id, children.step FROM children WHERE children.state = 'ready'`;

/**
 * succeedSteps — running → succeeded for the steps of these jobs, with their
 * outputs, and the fan-in, as COMPLETE_STEPS does (for a step whose job
 * completed by another path: the repair pass). $1 job ids uuid[], $2
 * outputs bytea[] (null = none). Returns the workflow runs touched.
 */
export const SUCCEED_STEPS = `
WITH o AS (SELECT * FROM unnest($1::uuid[], $2::bytea[]) AS o(job_id, output)),
done AS (
  UPDATE workflow_steps s SET state = 'succeeded', output = o.output, finished_at = now(), error = NULL
  FROM o WHERE s.job_id = o.job_id AND s.state = 'running'
  RETURNING s.workflow_run_id, s.children
), ${FAN_IN}
SELECT DISTINCT workflow_run_id FROM done`;

/** The steps downstream of `seed` (a SELECT of (workflow_run_id, step)), transitively. */
const DOWNSTREAM = (seed: string): string => `
  down(workflow_run_id, step) AS (
    SELECT s.workflow_run_id, c FROM workflow_steps s JOIN (${seed}) x ON s.workflow_run_id = x.workflow_run_id AND s.step = x.step,
      unnest(s.children) AS c
    UNION
    SELECT s.workflow_run_id, c FROM workflow_steps s JOIN down d ON s.workflow_run_id = d.workflow_run_id AND s.step = d.step,
      unnest(s.children) AS c)`;

/**
 * endStep — running → failed (its run is dead: retries exhausted, or not
 * retryable) or → cancelled (its run was cancelled), for the step of this
 * job; and what that means downstream, by each step's trigger rule: every
 * all_success step downstream of it (through all_success steps only) still
 * pending or ready → upstream_failed (never delivered); each all_done step
 * whose parent ended here (this step, or one just made upstream_failed)
 * counts that parent as through (`waiting` − 1; ready at 0), and the cascade
 * stops there: an all_done step runs, and its own outcome is what its
 * children see. Independent branches are untouched. $1 job id, $2 'failed' |
 * 'cancelled', $3 error. Returns the workflow run.
 */
export const END_STEP = `
WITH RECURSIVE ended AS (
  SELECT s.workflow_run_id, s.step FROM workflow_steps s WHERE s.job_id = $1 AND s.state = 'running'
), doomed(workflow_run_id, step) AS (
  SELECT c.workflow_run_id, c.step FROM ended e
  JOIN workflow_steps p ON p.workflow_run_id = e.workflow_run_id AND p.step = e.step
  JOIN workflow_steps c ON c.workflow_run_id = p.workflow_run_id AND c.step = ANY(p.children)
  WHERE c.trigger = 'all_success' AND c.state IN ('pending', 'ready')
  UNION
  SELECT c.workflow_run_id, c.step FROM doomed d
  JOIN workflow_steps p ON p.workflow_run_id = d.workflow_run_id AND p.step = d.step
  JOIN workflow_steps c ON c.workflow_run_id = p.workflow_run_id AND c.step = ANY(p.children)
  WHERE c.trigger = 'all_success' AND c.state IN ('pending', 'ready')
), through AS (
  -- The all_done children of every step that ended here, with how many of their parents that is.
  SELECT c.workflow_run_id, c.step, count(*)::int AS n
  FROM (SELECT workflow_run_id, step FROM ended UNION SELECT workflow_run_id, step FROM doomed) x
  JOIN workflow_steps p ON p.workflow_run_id = x.workflow_run_id AND p.step = x.step
  JOIN workflow_steps c ON c.workflow_run_id = p.workflow_run_id AND c.step = ANY(p.children)
  WHERE c.trigger = 'all_done' AND c.state = 'pending'
  GROUP BY c.workflow_run_id, c.step
), step_out AS (
  UPDATE workflow_steps s SET state = $2, error = $3, finished_at = now()
  FROM ended e WHERE s.workflow_run_id = e.workflow_run_id AND s.step = e.step AND s.state = 'running'
  RETURNING s.workflow_run_id
), cascade AS (
  UPDATE workflow_steps s SET state = 'upstream_failed', finished_at = now(), ready_at = NULL
  FROM doomed d
  WHERE s.workflow_run_id = d.workflow_run_id AND s.step = d.step AND s.state IN ('pending', 'ready')
  RETURNING s.step
), released AS (
  UPDATE workflow_steps s SET waiting = s.waiting - t.n,
    state = CASE WHEN s.waiting - t.n = 0 THEN 'ready' ELSE 'pending' END,
    ready_at = CASE WHEN s.waiting - t.n = 0 THEN now() END
  FROM through t WHERE s.workflow_run_id = t.workflow_run_id AND s.step = t.step AND s.state = 'pending'
  RETURNING s.step
)
SELECT workflow_run_id, (SELECT count(*) FROM cascade)::int AS upstream_failed FROM step_out`;

/**
 * One started step: its new run and its workflow run. A run fired by the
 * statement (status 'fired') carries what a worker receives; a scheduled
 * one goes to the router (its payload and parents' outputs are not sent back).
 */
export interface StartedStepRow extends FiredRunRow {
  workflow_run_id: string;
  /** fired: this transaction fired it (a hand-off); scheduled: routed, the claim takes it. */
  status: 'fired' | 'scheduled';
}

/**
 * A time-ordered id made by Postgres, for the jobs it makes itself (a step's
 * job, in START_READY_STEPS): a UUIDv7 as the daemon's (daemon/ids.ts), so
 * that its keys go to the right edge of jobs_pkey, runs_job and
 * workflow_steps_job. gen_random_uuid() with its first 48 bits replaced by
 * the Unix time in ms and its version bits set to 7 (PostgreSQL 18 has
 * uuidv7(); 15 does not). Volatile: a new id per row.
 */
export const UUID_V7 = `encode(set_bit(set_bit(
    overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
    52, 1), 53, 1), 'hex')::uuid`;

/**
 * startReadySteps — ready → running for the ready steps of these (locked,
 * running) workflow runs, within each run's limit on steps in flight, in
 * topological order: each gets its generation's job (the parents' outputs
 * copied into it) and the job's first run, due at the workflow's start time
 * or now. The job is unique per (workflow run, step, generation): made at
 * most once. A run due by now, delivered at least once, on a shard whose
 * fence is among $2/$3 (the caller's, held FOR SHARE for the rest of the
 * transaction as a claim holds them: I-1) is born fired under that fence —
 * the claim made in the same statement, so the caller hands it to delivery
 * right after commit; the others are born scheduled, for the router. And in
 * the same statement, the runs with nothing left to run
 * finish: running → succeeded (every step succeeded) or → failed (some step
 * failed, was cancelled or upstream-failed) once no step is pending, ready
 * or running (as of the statement's snapshot: a run with a step this
 * statement starts had it ready, so it is not finished). $1 workflow run ids
 * uuid[], $2 shards int[] and $3 fences int8[] to fire under (empty: fire
 * nothing), $4 the candidates: null (every ready step of the runs), or a
 * JSON object naming, per run id, the steps the caller just made ready —
 * then a run without a limit on steps in flight starts only those, read
 * through the primary key (in such a run no other step can be waiting,
 * ready: steps start in the transaction that makes them ready, and the
 * repair pass, with null, catches any that did not), and a run it names is
 * not looked at for finishing (it has a ready step). Returns the new runs.
 */
export const START_READY_STEPS = `
WITH finished AS (
  UPDATE workflow_runs w SET
    state = CASE WHEN EXISTS (SELECT 1 FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state <> 'succeeded')
                 THEN 'failed' ELSE 'succeeded' END,
    finished_at = now(), updated_at = now()
  WHERE w.id = ANY($1::uuid[]) AND w.state = 'running' AND NOT coalesce($4::jsonb ? w.id::text, false)
    AND NOT EXISTS (SELECT 1 FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state IN ('pending', 'ready', 'running'))
  RETURNING w.id
), fenced AS MATERIALIZED (
  SELECT s.shard, s.fence FROM shards s JOIN unnest($2::int[], $3::int8[]) AS o(shard, fence) ON s.shard = o.shard AND s.fence = o.fence
  WHERE s.shard IN (SELECT w.shard FROM workflow_runs w WHERE w.id = ANY($1::uuid[]))
  FOR SHARE OF s
), wf AS (
  -- only: the candidates of a run without a limit (null: look at every ready step).
  SELECT w.id, w.namespace, w.max_in_flight,
    CASE WHEN $4::jsonb IS NOT NULL AND w.max_in_flight = 0 THEN ARRAY(SELECT jsonb_array_elements_text($4::jsonb -> w.id::text)) END AS only
  FROM workflow_runs w WHERE w.id = ANY($1::uuid[]) AND w.state = 'running'
), pick AS MATERIALIZED (
  -- LATERAL: each run's steps through the primary key (a join on the CTE scanned every step of every run);
  -- MATERIALIZED: inlined into the UPDATE, the planner re-ran it per ready step.
  -- Each pick carries its run's namespace: CTEs joined on a key plan as nested loops (estimates of 1 row), n × m.
  SELECT wf.id AS workflow_run_id, x.step, wf.namespace FROM wf
  CROSS JOIN LATERAL (
    SELECT r.step, row_number() OVER (ORDER BY r.position) AS rn FROM (
      SELECT s.step, s.position FROM workflow_steps s
      WHERE wf.only IS NOT NULL AND s.workflow_run_id = wf.id AND s.step = ANY(wf.only) AND s.state = 'ready'
      UNION ALL
      SELECT s.step, s.position FROM workflow_steps s WHERE wf.only IS NULL AND s.workflow_run_id = wf.id AND s.state = 'ready') r) x
  WHERE wf.max_in_flight = 0
     OR x.rn <= wf.max_in_flight - (SELECT count(*) FROM workflow_steps b WHERE b.workflow_run_id = wf.id AND b.state = 'running')
), started AS (
  UPDATE workflow_steps s SET state = 'running', generation = s.generation + 1, job_id = ${UUID_V7}, started_at = now(),
    finished_at = NULL, error = NULL, output = NULL
  FROM pick WHERE s.workflow_run_id = pick.workflow_run_id AND s.step = pick.step AND s.state = 'ready'
  RETURNING s.*, pick.namespace
), jobs_in AS (
  INSERT INTO jobs (id, namespace, queue, shard, payload, priority, delivery, max_attempts, initial_backoff_ms, max_backoff_ms,
                    lease_ms, status, workflow_run_id, workflow_step, workflow_generation, parent_steps, parent_outputs)
  SELECT st.job_id, st.namespace, st.queue, st.shard, st.payload, st.priority, st.delivery, st.max_attempts, st.initial_backoff_ms,
         st.max_backoff_ms, st.lease_ms, 'active', st.workflow_run_id, st.step, st.generation, po.steps, po.outputs
  FROM started st
  CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(p.step ORDER BY p.step), '{}') AS steps,
           coalesce(array_agg(coalesce(p.output, '\\x'::bytea) ORDER BY p.step), '{}') AS outputs
    FROM workflow_steps p WHERE p.workflow_run_id = st.workflow_run_id AND p.step = ANY(st.parents)) po
  ON CONFLICT (workflow_run_id, workflow_step, workflow_generation) WHERE workflow_run_id IS NOT NULL DO NOTHING
  RETURNING *
), planned AS MATERIALIZED (
  -- Each new run with its id drawn here, so the answer is read from this one CTE (no join back to the insert).
  SELECT j.*, nextval(pg_get_serial_sequence('runs', 'id')) AS run_id, x.due_at, x.fence,
    x.fence IS NOT NULL AND j.delivery = 'at_least_once' AND x.due_at <= now() AS fire
  FROM jobs_in j
  CROSS JOIN LATERAL (SELECT greatest(w.start_at, date_trunc('milliseconds', now())) AS due_at,
                             (SELECT f.fence FROM fenced f WHERE f.shard = w.shard) AS fence
                      FROM workflow_runs w WHERE w.id = j.workflow_run_id) x
), runs_in AS (
  INSERT INTO runs (id, job_id, shard, queue, priority, attempt, status, due_at, idempotency_key, origin, fence, deliveries, claimed_at, lease_expires_at)
  OVERRIDING SYSTEM VALUE
  SELECT t.run_id, t.id, t.shard, t.queue, t.priority, 1, CASE WHEN t.fire THEN 'fired' ELSE 'scheduled' END, t.due_at,
         t.workflow_run_id || ':' || t.workflow_step || ':' || t.workflow_generation, 'workflow',
         CASE WHEN t.fire THEN t.fence ELSE 0 END, CASE WHEN t.fire THEN 1 ELSE 0 END,
         CASE WHEN t.fire THEN now() END, CASE WHEN t.fire THEN now() + t.lease_ms * interval '1 millisecond' END
  FROM planned t
)
-- What runs_in wrote (a FiredRunRow), from planned: a new run has no fire, answer or checkpoint yet.
SELECT t.run_id AS id, t.id AS job_id, t.shard, t.queue, t.priority, 1 AS attempt,
  CASE WHEN t.fire THEN 'fired' ELSE 'scheduled' END AS status, ${ms('t.due_at')} AS due_at_ms, NULL::int8 AS fired_at_ms,
  NULL::float8 AS lag_ms, CASE WHEN t.fire THEN t.fence ELSE 0 END AS fence, CASE WHEN t.fire THEN 1 ELSE 0 END AS deliveries,
  CASE WHEN t.fire THEN ${ms(`now() + t.lease_ms * interval '1 millisecond'`)} END AS lease_expires_at_ms,
  t.workflow_run_id || ':' || t.workflow_step || ':' || t.workflow_generation AS idempotency_key, NULL::text AS error,
  NULL::int8 AS finished_at_ms, CASE WHEN t.fire THEN ${ms('now()')} END AS claimed_at_ms, NULL::int8 AS nominal_at_ms,
  'workflow' AS origin, NULL::text AS worker_id, NULL::float8 AS progress, NULL::int8 AS replay_of, NULL::int8 AS cancel_requested_at_ms,
  NULL::bytea AS checkpoint, CASE WHEN t.fire THEN t.payload END AS payload, t.namespace AS job_namespace, t.delivery, t.max_attempts,
  t.initial_backoff_ms, t.max_backoff_ms, t.workflow_run_id, t.workflow_step,
  CASE WHEN t.fire THEN t.parent_steps END AS parent_steps, CASE WHEN t.fire THEN t.parent_outputs END AS parent_outputs
FROM planned t`;

/**
 * cancelWorkflowRun — running → cancelled (the row is locked): its steps
 * not started (pending, ready) → cancelled; its running steps → cancelled
 * with their runs waiting to fire cancelled and their fired runs asked to
 * stop (the cooperative cancel of CancelJob). $1 id. Returns the runs
 * touched: `cancelled` (drop from memory) or `cancelling` (tell the worker).
 */
export const CANCEL_WORKFLOW_RUN = `
WITH wf AS (
  UPDATE workflow_runs SET state = 'cancelled', finished_at = now(), updated_at = now()
  WHERE id = $1 AND state = 'running' RETURNING id
), steps_out AS (
  UPDATE workflow_steps s SET state = 'cancelled', finished_at = now()
  FROM wf WHERE s.workflow_run_id = wf.id AND s.state IN ('pending', 'ready', 'running')
  RETURNING s.job_id, s.shard
), runs_out AS (
  UPDATE runs r SET status = 'cancelled', finished_at = now()
  FROM steps_out s WHERE r.job_id = s.job_id AND r.shard = s.shard AND r.status = 'scheduled'
  RETURNING r.id, r.shard
), stopping AS (
  UPDATE runs r SET cancel_requested_at = now()
  FROM steps_out s WHERE r.job_id = s.job_id AND r.shard = s.shard AND r.status = 'fired' AND r.cancel_requested_at IS NULL
  RETURNING r.id, r.shard
), jobs_out AS (
  UPDATE jobs j SET status = 'cancelled', updated_at = now()
  FROM steps_out s WHERE j.id = s.job_id AND j.shard = s.shard AND j.status = 'active'
  RETURNING j.id
)
SELECT id, shard, 'cancelled' AS what FROM runs_out
UNION ALL SELECT id, shard, 'cancelling' AS what FROM stopping
UNION ALL SELECT NULL, NULL, 'workflow' FROM wf`;

/**
 * resetSteps — a partial re-run of a finished (locked) workflow run: the
 * steps that failed, were cancelled or upstream-failed, plus the steps named
 * in $2 (succeeded steps to run again), plus everything downstream of those,
 * go back to pending (waiting for their parents in the reset set) or ready
 * (none); succeeded steps outside the set keep their state and outputs. The
 * run is running again. $1 id, $2 step names text[]. Returns the steps reset.
 */
export const RESET_STEPS = `
WITH RECURSIVE seed AS (
  SELECT s.workflow_run_id, s.step FROM workflow_steps s
  WHERE s.workflow_run_id = $1 AND (s.state IN ('failed', 'upstream_failed', 'cancelled') OR s.step = ANY($2::text[]))
), ${DOWNSTREAM('SELECT workflow_run_id, step FROM seed')},
reset AS (SELECT step FROM seed UNION SELECT step FROM down),
wf AS (
  UPDATE workflow_runs SET state = 'running', finished_at = NULL, updated_at = now(), retries = retries + 1
  WHERE id = $1 AND state IN ('failed', 'cancelled', 'succeeded') RETURNING id
)
UPDATE workflow_steps s SET
  waiting = (SELECT count(*) FROM unnest(s.parents) p WHERE p IN (SELECT step FROM reset))::int,
  state = CASE WHEN EXISTS (SELECT 1 FROM unnest(s.parents) p WHERE p IN (SELECT step FROM reset)) THEN 'pending' ELSE 'ready' END,
  ready_at = CASE WHEN EXISTS (SELECT 1 FROM unnest(s.parents) p WHERE p IN (SELECT step FROM reset)) THEN NULL ELSE now() END,
  output = NULL, error = NULL, finished_at = NULL, started_at = NULL
FROM wf WHERE s.workflow_run_id = wf.id AND s.step IN (SELECT step FROM reset)
RETURNING s.step`;

// ------------------------------------------------------------------ repair ---

/**
 * repairCandidates — running workflow runs of our fenced shards that the
 * event path left with something to do: a ready step its limit lets start,
 * a running step whose job ended without the step (a CancelJob on the
 * step's job, a run that ended by another path), or nothing left to run.
 * Locked FOR UPDATE SKIP LOCKED (a transition in flight is not waited for:
 * next pass). Pages by id: $3 after id (exclusive; the nil UUID first), $4
 * limit. $1 shards, $2 fences.
 */
export const REPAIR_CANDIDATES = `
SELECT w.id FROM workflow_runs w
WHERE ${heldShard('w.shard', '$1', '$2')} AND w.state = 'running' AND w.id > $3::uuid AND (
  (EXISTS (SELECT 1 FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state = 'ready')
   AND (w.max_in_flight = 0
        OR (SELECT count(*) FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state = 'running') < w.max_in_flight))
  OR EXISTS (SELECT 1 FROM workflow_steps s JOIN jobs j ON j.id = s.job_id AND j.shard = s.shard
             WHERE s.workflow_run_id = w.id AND s.state = 'running' AND j.status <> 'active')
  OR NOT EXISTS (SELECT 1 FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state IN ('pending', 'ready', 'running')))
ORDER BY w.id LIMIT $4 FOR UPDATE OF w SKIP LOCKED`;

/**
 * strandedSteps — running steps of these (locked) workflow runs whose job has
 * ended: what it ended as (completed, dead, cancelled) and its last error.
 * $1 ids uuid[].
 */
export const STRANDED_STEPS = `
SELECT s.job_id, j.status,
  (SELECT r.error FROM runs r WHERE r.job_id = j.id ORDER BY r.attempt DESC, r.id DESC LIMIT 1) AS error
FROM workflow_steps s JOIN jobs j ON j.id = s.job_id AND j.shard = s.shard
WHERE s.workflow_run_id = ANY($1::uuid[]) AND s.state = 'running' AND j.status <> 'active'`;

// ------------------------------------------------------------------- reads ---

export const WORKFLOW_RUN_COLUMNS = `w.id, w.namespace, w.name, w.version, w.shard, w.state, w.max_in_flight,
  ${ms('w.start_at')} AS start_at_ms, ${ms('w.created_at')} AS created_at_ms, ${ms('w.finished_at')} AS finished_at_ms, w.retries,
  (SELECT count(*) FROM workflow_steps s WHERE s.workflow_run_id = w.id)::int AS steps_total,
  (SELECT count(*) FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state = 'succeeded')::int AS steps_succeeded,
  (SELECT count(*) FROM workflow_steps s WHERE s.workflow_run_id = w.id AND s.state IN ('failed', 'upstream_failed', 'cancelled'))::int AS steps_failed`;

export interface WorkflowRunRow {
  id: string;
  namespace: string;
  name: string;
  version: number;
  shard: number;
  state: WorkflowRunState;
  max_in_flight: number;
  start_at_ms: number;
  created_at_ms: number;
  finished_at_ms: number | null;
  retries: number;
  steps_total: number;
  steps_succeeded: number;
  steps_failed: number;
}

/** selectWorkflowRun — $1 id. */
export const SELECT_WORKFLOW_RUN = `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs w WHERE w.id = $1`;

/** selectWorkflowRuns — $1 ids uuid[] (any order; missing ones are not returned). */
export const SELECT_WORKFLOW_RUNS = `SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs w WHERE w.id = ANY($1::uuid[])`;

export interface StepRow {
  step: string;
  position: number;
  parents: string[];
  children: string[];
  trigger: StepTrigger;
  state: StepState;
  generation: number;
  job_id: string | null;
  queue: string;
  waiting: number;
  error: string | null;
  output: Buffer | null;
  output_bytes: number;
  ready_at_ms: number | null;
  started_at_ms: number | null;
  finished_at_ms: number | null;
  /** Attempts of the current generation (runs of its job). */
  attempts: number;
  /** The current generation's latest run. */
  run_id: number | null;
  fired_at_ms: number | null;
  lag_ms: number | null;
}

/** selectSteps — every step of a workflow run, in topological order, with its latest run. $1 id. */
export const SELECT_STEPS = `
SELECT s.step, s.position, s.parents, s.children, s.trigger, s.state, s.generation, s.job_id, s.queue, s.waiting, s.error, s.output,
  coalesce(length(s.output), 0) AS output_bytes,
  ${ms('s.ready_at')} AS ready_at_ms, ${ms('s.started_at')} AS started_at_ms, ${ms('s.finished_at')} AS finished_at_ms,
  coalesce(r.attempt, 0) AS attempts, r.id AS run_id, ${ms('r.fired_at')} AS fired_at_ms, r.lag_ms
FROM workflow_steps s
LEFT JOIN LATERAL (SELECT r.id, r.attempt, r.fired_at, r.lag_ms FROM runs r WHERE r.job_id = s.job_id AND r.shard = s.shard
                   ORDER BY r.attempt DESC, r.id DESC LIMIT 1) r ON true
WHERE s.workflow_run_id = $1 ORDER BY s.position`;

/**
 * listWorkflowRuns — newest first. $1 namespace (null = any), $2 name (null
 * = any), $3 state (null = any), $4/$5 keyset (created ms, id) of the
 * previous page's last run (null: first page), $6 limit.
 */
export const LIST_WORKFLOW_RUNS = `
SELECT ${WORKFLOW_RUN_COLUMNS} FROM workflow_runs w
WHERE ($1::text IS NULL OR w.namespace = $1) AND ($2::text IS NULL OR w.name = $2) AND ($3::text IS NULL OR w.state = $3)
  AND ($4::int8 IS NULL OR (w.created_at, w.id) < (to_timestamp($4::int8 / 1000.0), $5::uuid))
ORDER BY w.created_at DESC, w.id DESC LIMIT $6`;
