/**
 * Step transitions, made inside the transaction that causes them: a worker's
 * Complete or final Fail of a step's run, StartWorkflow, RetryWorkflowRun,
 * and the repair pass. This is the thin control loop on top of runs: a step
 * that becomes ready is made a run of the engine in the same transaction,
 * and the router is told inside it (the shard's owner hears on commit).
 *
 * Step states (one row per workflow run × step, workflow_steps.state):
 *
 *            its trigger holds (see below)      its run completed
 *   pending ─────────────────────▶ ready ──start──▶ running ───────────▶ succeeded
 *      │                             │   (within      │   │ its run dead (retries
 *      │ a parent failed (all_success)│    the limit)  │   │ exhausted / not retryable)
 *      ├──────────────┬──────────────┘                │   └────────────▶ failed
 *      ▼              │ CancelWorkflowRun             │ its run cancelled,
 *   upstream_failed   └──────────────▶ cancelled ◀────┘ or CancelWorkflowRun
 *
 * failed, upstream_failed and cancelled steps (and, if asked, chosen
 * succeeded ones) go back to pending/ready on RetryWorkflowRun, with
 * everything downstream of them; the next start is a new generation (a new
 * job, unique per (workflow run, step, generation)).
 *
 * A step's trigger (migration 0010): `all_success` (default) holds when
 * every parent succeeded — a parent that failed, was cancelled or was
 * itself doomed makes the step upstream_failed; `all_done` holds when every
 * parent ended, whatever the outcome (a cleanup step: never
 * upstream_failed, and the cascade stops at it).
 *
 * Invariants: a step starts only when its trigger holds (`waiting` reaches
 * 0 in the statement that records the last parent through); a
 * step's generation is started at most once (the ready → running update is
 * conditional and the job is unique); at most `max_in_flight` steps of a
 * run are running (the run's row is locked by every transaction that
 * changes its steps: callers lock first, see queries/workflows.ts).
 */
import type { Queryable } from '../db/pool.js';
import { query, queryPrepared } from '../db/pool.js';
import { COMPLETE_STEPS, END_STEP, LOCK_WORKFLOW_RUNS, LOCK_WORKFLOWS_OF_RUNS, START_READY_STEPS, type StartedStepRow } from '../db/queries/workflows.js';
import type { KnownHandOff, RunRef } from '../run-ref.js';
import type { FenceArrays } from '../coord/fence.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import { runRefOf } from '../run-ref.js';

/** Where new step runs go: the engine's router (daemon/engine/router.ts). */
export interface StepRouting {
  /** Scheduled runs, told inside the transaction; what it returns runs after commit. */
  inTransaction(tx: Queryable, runs: readonly RunRef[]): Promise<() => void>;
  /** The fences under which new step runs may be fired in the transaction (empty: none). */
  firingFences(): FenceArrays;
  /** Runs fired in a committed transaction: to delivery. */
  deliverFired(runs: readonly FiredRunRow[]): void;
}

/** A Complete of a step's run, with the step's output (null: none). */
export interface StepCompletion extends KnownHandOff {
  output: Buffer | null;
}

const nothing = (): void => undefined;

/** COMPLETE_STEPS: a delivery that matched (id set), or a child it made ready (ready_step set). */
interface CompletedStepRow {
  id: number | null;
  fence: number | null;
  deliveries: number | null;
  workflow_run_id: string | null;
  ready_step: string | null;
}

export class StepTransitions {
  constructor(private readonly router: StepRouting) {}

  /** Locks workflow runs (in id order): the first statement of any transaction that changes their steps. */
  async lock(tx: Queryable, workflowRunIds: readonly string[]): Promise<void> {
    if (workflowRunIds.length > 0) await query(tx, LOCK_WORKFLOW_RUNS, [[...workflowRunIds]]);
  }

  /**
   * Completes runs of steps: locks their workflow runs, completes the runs
   * that still match their delivery, marks their steps succeeded with their
   * outputs, makes children whose last parent that was, ready, starts what
   * the limits allow and finishes runs with nothing left. Returns the
   * deliveries that matched and what to do after commit.
   */
  async complete(tx: Queryable, ds: readonly StepCompletion[]): Promise<{ done: { id: number; fence: number; deliveries: number }[]; afterCommit: () => void }> {
    const sorted = [...ds].sort((a, b) => a.runId - b.runId);
    await queryPrepared(tx, 'tl_wf_lock_of_runs', LOCK_WORKFLOWS_OF_RUNS, [sorted.map((d) => d.runId), sorted.map((d) => d.shard)]);
    const { rows } = await queryPrepared<CompletedStepRow>(tx, 'tl_wf_complete_steps', COMPLETE_STEPS, [
      sorted.map((d) => d.runId),
      sorted.map((d) => d.fence),
      sorted.map((d) => d.deliveries),
      sorted.map((d) => d.shard),
      sorted.map((d) => d.sentAtMs),
      sorted.map((d) => d.output),
    ]);
    const done: { id: number; fence: number; deliveries: number }[] = [];
    const touched: string[] = [];
    // The children this made ready, by workflow run: the only steps START_READY_STEPS needs to look at.
    const ready: Record<string, string[]> = {};
    for (const r of rows) {
      if (r.id !== null) done.push({ id: r.id, fence: r.fence as number, deliveries: r.deliveries as number });
      if (r.workflow_run_id === null) continue;
      if (r.ready_step === null) touched.push(r.workflow_run_id);
      else (ready[r.workflow_run_id] ??= []).push(r.ready_step);
    }
    if (done.length === 0) return { done, afterCommit: nothing };
    const afterCommit = await this.advance(tx, touched, ready);
    return { done, afterCommit };
  }

  /**
   * A step's run ended without success (inside the Fail's transaction, after
   * `lock`): the step fails (dead run) or is cancelled, its downstream is
   * upstream_failed, other ready steps may start in the freed slot.
   */
  async end(tx: Queryable, jobId: string, as: 'failed' | 'cancelled', error: string): Promise<() => void> {
    const { rows } = await query<{ workflow_run_id: string }>(tx, END_STEP, [jobId, as, error]);
    return this.advance(tx, rows.map((r) => r.workflow_run_id));
  }

  /**
   * Starts the ready steps of (locked) workflow runs within their limits, and
   * finishes those with nothing left to run. `candidates`: the steps the
   * caller just made ready, by run (see START_READY_STEPS); absent, every
   * ready step is looked at. `fire`: steps due now on our shards are fired
   * by this transaction (an answer's children, the repair pass); false, they
   * are made scheduled and routed (StartWorkflow, RetryWorkflowRun: API
   * transactions, many at once, need not hold shard rows — a root is not a
   * hand-off, and the claim takes it a tick later).
   */
  async advance(tx: Queryable, workflowRunIds: readonly string[], candidates: Record<string, string[]> | null = null, fire = true): Promise<() => void> {
    const ids = [...new Set(workflowRunIds)];
    if (ids.length === 0) return nothing;
    const { shards, fences } = fire ? this.router.firingFences() : { shards: [], fences: [] };
    const { rows } = await queryPrepared<StartedStepRow>(tx, 'tl_wf_start_ready', START_READY_STEPS, [ids, shards, fences, candidates === null ? null : JSON.stringify(candidates)]);
    if (rows.length === 0) return nothing;
    const fired = rows.filter((r) => r.status === 'fired');
    const scheduled = rows.filter((r) => r.status !== 'fired').map(runRefOf);
    const route = scheduled.length > 0 ? await this.router.inTransaction(tx, scheduled) : nothing;
    if (fired.length === 0) return route;
    return () => {
      route();
      this.router.deliverFired(fired);
    };
  }
}
