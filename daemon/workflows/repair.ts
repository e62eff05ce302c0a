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
 * States: stopped → running (start: a pass every `intervalMs`, and at once
 * on kick) → stopped. Passes never overlap.
 */
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
/** Batches per pass (the next pass goes on). */
const MAX_BATCHES = 10;

export class WorkflowRepair {
  private readonly steps: StepTransitions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(private readonly deps: WorkflowRepairDeps) {
    this.steps = new StepTransitions(deps.router);
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Run a pass now (or right after the one in flight). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) => this.deps.log.warn({ err: String(err) }, 'workflow repair pass failed; next pass retries'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** One pass over every owned shard; resolves when done (tests wait on it). */
  async pass(): Promise<void> {
    for (let i = 0; i < MAX_BATCHES && !this.stopped; i++) if ((await this.batch()) < RUNS_PER_BATCH) break;
  }

  private async batch(): Promise<number> {
    const { shards, fences } = heldFences(this.deps.fences);
    if (shards.length === 0) return 0;
    let routes: (() => void)[] = [];
    const n = await transaction(this.deps.db, async (tx) => {
      const { rows } = await query<{ id: string }>(tx, REPAIR_CANDIDATES, [plainArray(shards), plainArray(fences), RUNS_PER_BATCH]);
      routes = []; // a retried transaction must not route what a rolled-back one wrote
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      const { rows: stranded } = await query<{ job_id: string; status: string; error: string | null }>(tx, STRANDED_STEPS, [ids]);
      for (const s of stranded) {
        if (s.status === 'completed') await query(tx, SUCCEED_STEPS, [[s.job_id], [null]]);
        else routes.push(await this.steps.end(tx, s.job_id, s.status === 'dead' ? 'failed' : 'cancelled', s.error ?? `its job ended ${s.status}`));
      }
      routes.push(await this.steps.advance(tx, ids));
      if (stranded.length > 0) this.deps.log.info({ workflowRuns: ids.length, stranded: stranded.length }, 'workflow repair: steps whose job ended outside the event path');
      return rows.length;
    });
    routes.forEach((r) => r());
    return n;
  }
}
