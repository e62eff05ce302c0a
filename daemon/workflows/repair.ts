/**
 * The workflow repair pass: the safety net under event-driven dispatch. On
 * the shards this daemon owns, it finds running workflow runs the event path
 * left with something to do and does it, in one fenced transaction per
 * batch:
 *
 *   - a running step whose job ended by another path (CancelJob on the
 *     step's job, a ReplayRuns'd run) gets the transition its job's end
 *     means (succeeded, failed, cancelled) with its cascade;
 *   - ready steps start when their run's in-flight limit allows;
 *   - a run with nothing left to run finishes.
 *
 * Normally it finds nothing: completions and final failures do all of this
 * in their own transaction. It holds its shard rows FOR SHARE at its fences
 * (a takeover waits for the pass; a zombie's pass matches no shard) and
 * skips workflow runs locked by a transition in flight (next pass).
 *
 * A candidate is only a run where something can be done (ready steps the
 * limit lets start, not ready steps waiting for it), and a pass pages by
 * id, so no set of runs can keep the others from being looked at.
 *
 * States: stopped → running (start: a pass every `intervalMs` — the
 * engine's --repair-interval-ms — and at once on kick, e.g. a shard
 * acquired) → stopped. Passes never overlap.
 */
import { PeriodicPass } from '../engine/periodic-pass.js';
import type { Db } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import { REPAIR_CANDIDATES, STRANDED_STEPS, SUCCEED_STEPS } from '../db/queries/workflows.js';
import { heldFences, type ShardFences } from '../coord/fence.js';
import { plainArray } from '../scheduling/pg-arrays.js';
import type { Logger } from '../log.js';
import { StepTransitions, type StepRouting } from './step-transitions.js';

export interface WorkflowRepairDeps {
  db: Db;
  fences: ShardFences;
  router: StepRouting;
  log: Logger;
  intervalMs: number;
}

/** Workflow runs per transaction. */
const RUNS_PER_BATCH = 200;
/** Batches per pass (the next pass starts from the first id again). */
const MAX_BATCHES = 10;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

export class WorkflowRepair {
  private readonly steps: StepTransitions;
  private readonly passes: PeriodicPass;

  constructor(private readonly deps: WorkflowRepairDeps) {
    this.steps = new StepTransitions(deps.router);
    this.passes = new PeriodicPass('workflow repair', deps.intervalMs, () => this.pass(), deps.log);
  }

  start(): void {
    this.passes.start(false);
  }

  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** Run a pass now (or right after the one in flight). */
  kick(): void {
    this.passes.kick();
  }

  /** One pass over every owned shard; resolves when done (tests wait on it). */
  async pass(): Promise<void> {
    let after: string | null = NIL_UUID;
    for (let i = 0; i < MAX_BATCHES && !this.passes.stopped && after !== null; i++) after = await this.batch(after);
  }

  /** One fenced transaction over the candidates after `after` (by id); returns the last id taken, or null when none are left. */
  private async batch(after: string): Promise<string | null> {
    const { shards, fences } = heldFences(this.deps.fences);
    if (shards.length === 0) return null;
    let routes: (() => void)[] = [];
    const last = await transaction(this.deps.db, async (tx) => {
      const { rows } = await query<{ id: string }>(tx, REPAIR_CANDIDATES, [plainArray(shards), plainArray(fences), after, RUNS_PER_BATCH]);
      routes = []; // a retried transaction must not route what a rolled-back one wrote
      if (rows.length === 0) return null;
      const ids = rows.map((r) => r.id);
      const { rows: stranded } = await query<{ job_id: string; status: string; error: string | null }>(tx, STRANDED_STEPS, [ids]);
      for (const s of stranded) {
        if (s.status === 'completed') await query(tx, SUCCEED_STEPS, [[s.job_id], [null]]);
        else routes.push(await this.steps.end(tx, s.job_id, s.status === 'dead' ? 'failed' : 'cancelled', s.error ?? `its job ended ${s.status}`));
      }
      routes.push(await this.steps.advance(tx, ids));
      if (stranded.length > 0) this.deps.log.info({ workflowRuns: ids.length, stranded: stranded.length }, 'workflow repair: steps whose job ended outside the event path');
      return rows.length < RUNS_PER_BATCH ? null : ids[ids.length - 1];
    });
    routes.forEach((r) => r());
    return last;
  }
}
