/**
 * The materialiser: on the shards this daemon owns, turns the next
 * occurrences of recurring jobs into runs before they come due, so the fast
 * lane fires them like any other run; and starts buffered runs once their
 * job has nothing running.
 *
 * A pass is one fenced transaction per batch of jobs: lock our shard rows
 * FOR SHARE at our fences (a takeover waits for the pass, and a pass after a
 * takeover finds no row), lock the due jobs (SKIP LOCKED: a verb holding one
 * is not waited for), write their runs, advance `next_fire_at`, and route the
 * runs inside the same transaction. A zombie owner's pass matches no shard
 * row; a pass racing a verb or another daemon cannot make an occurrence twice
 * (unique (job, nominal time)).
 *
 * A job is taken once its next occurrence is within half the lead (the
 * window, or --materialise-ahead-ms) and made up to the whole lead
 * (hysteresis: frequent jobs are touched every lead/2, not every pass). A batch takes the earliest due jobs of every shard (a
 * quota each); a pass takes batches until no job is due, within a time budget.
 *
 * States: stopped → running (start: a pass every `intervalMs`, and at once on
 * kick) → stopped. Passes never overlap.
 */
import { PeriodicPass } from '../engine/periodic-pass.js';
import type { Db } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import { ADVANCE_JOBS, PROMOTE_BUFFERED, SELECT_DUE_RECURRING, type DueRecurringRow, type OccurrenceRow } from '../db/queries/recurring.js';
import { heldFences, type ShardFences } from '../coord/fence.js';
import type { RunRouter } from '../engine/router.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { plainArray } from '../scheduling/pg-arrays.js';
import { firingRefs, makeOccurrences, missedWritten, type OccurrenceToMake } from './occurrences.js';
import { planOccurrences, storedRecurrence, type Plan } from './recurrence.js';

export interface MaterialiserDeps {
  db: Db;
  fences: ShardFences;
  router: RunRouter;
  wallNow: () => number;
  log: Logger;
  metrics: Metrics;
  intervalMs: number;
  /** Occurrences due within this many ms are made into runs (at least the fast lane's window). */
  aheadMs: number;
  /** An occurrence this late when first seen was missed by the cluster: the catch-up rule applies. */
  lateToleranceMs: number;
}

/** Jobs per transaction, shared out evenly over the owned shards (each shard's earliest first). */
const JOBS_PER_BATCH = 500;
/** A pass takes batches until no job is due, or for this long (the next pass goes on). */
const PASS_BUDGET_MS = 2_000;
const BUFFERED_PER_PASS = 1_000;
/** Job ids named in the "occurrences missed" log line of one batch. */
const MISSED_JOBS_LOGGED = 20;

export class Materialiser {
  private readonly passes: PeriodicPass;

  constructor(private readonly deps: MaterialiserDeps) {
    this.passes = new PeriodicPass('materialiser', deps.intervalMs, () => this.pass(), deps.log);
  }

  start(): void {
    this.passes.start(true);
  }

  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** Run a pass now (or right after the one in flight). */
  kick(): void {
    this.passes.kick();
  }

  /** One pass over every owned shard; resolves when it is done (tests wait on it). */
  async pass(): Promise<void> {
    const until = performance.now() + PASS_BUDGET_MS;
    while (!this.passes.stopped && performance.now() < until) {
      if ((await this.batch()) === 0) break;
    }
    await this.promoteBuffered();
  }

  /** One fenced transaction over up to JOBS_PER_BATCH due jobs; returns how many it moved on. */
  private async batch(): Promise<number> {
    const { shards, fences } = heldFences(this.deps.fences);
    if (shards.length === 0) return 0;
    let afterCommit: (() => void) | undefined;
    let made: OccurrenceRow[] = [];
    let missed = 0;
    let passAtMs = 0;
    const missedJobs: string[] = [];
    const taken = await transaction(this.deps.db, async (tx) => {
      const now = this.deps.wallNow();
      passAtMs = now;
      // Hysteresis: a job is taken once its next occurrence is within half the
      // lead, and then made up to the whole lead — a per-second job is touched
      // every lead/2, not every pass. The lead is the window W unless
      // --materialise-ahead-ms says more (a burst of jobs due at one instant
      // needs time to be made: bench/README.md, "Recurring jobs").
      const horizon = now + this.deps.aheadMs;
      const lowWater = now + this.deps.aheadMs / 2;
      const perShard = Math.ceil(JOBS_PER_BATCH / shards.length);
      const { rows } = await query<DueRecurringRow>(tx, SELECT_DUE_RECURRING, [perShard, plainArray(shards), plainArray(fences), Math.floor(lowWater)]);
      if (rows.length === 0) return 0;
      const toMake: OccurrenceToMake[] = [];
      const plans: Plan[] = [];
      for (const job of rows) {
        let plan: Plan;
        try {
          plan = planOccurrences(
            { id: job.id, recurrence: storedRecurrence(job.recurrence), nextFireAtMs: job.next_fire_at_ms, occurrences: job.occurrences },
            now,
            horizon,
            this.deps.lateToleranceMs,
          );
        } catch (err) {
          // One unreadable rule must not stop every other job of the shard.
          this.deps.log.error({ err: String(err), jobId: job.id }, 'cannot plan recurring job; it stays where it is');
          plan = { runs: [], nextFireAtMs: job.next_fire_at_ms, made: 0, missed: 0 };
        }
        plans.push(plan);
        for (const r of plan.runs) toMake.push({ jobId: job.id, shard: job.shard, nominalMs: r.nominalMs, dueMs: r.dueMs, status: r.status });
      }
      made = await makeOccurrences(tx, toMake, 'schedule');
      // Missed as written: an occurrence a backfill ran already is not missed (its row conflicts).
      const missedOf = missedWritten(made);
      for (const [jobId, n] of missedOf) {
        missed += n;
        if (missedJobs.length < MISSED_JOBS_LOGGED) missedJobs.push(jobId);
      }
      await query(tx, ADVANCE_JOBS, [
        rows.map((r) => r.id),
        rows.map((r) => r.shard),
        rows.map((r) => r.next_fire_at_ms),
        plans.map((p) => p.nextFireAtMs),
        plans.map((p) => p.made),
        rows.map((r) => missedOf.get(r.id) ?? 0),
      ]);
      afterCommit = await this.deps.router.inTransaction(tx, firingRefs(made));
      // Jobs that moved on: one that did not (its rule cannot be planned) must not keep the pass going.
      return plans.filter((p, i) => p.made > 0 || p.missed > 0 || p.nextFireAtMs !== rows[i].next_fire_at_ms).length;
    });
    afterCommit?.();
    const scheduled = made.filter((m) => m.status === 'scheduled').length;
    this.deps.metrics.occurrences.inc({ outcome: 'scheduled' }, scheduled);
    if (missed > 0) {
      this.deps.metrics.occurrences.inc({ outcome: 'missed' }, missed);
      // `atMs`: the pass's clock; occurrences before atMs − lateTolerance were judged overdue.
      this.deps.log.warn({ missed, jobs: missedJobs, atMs: passAtMs }, 'recurring occurrences missed (older than their catch-up window)');
    }
    return taken;
  }

  /** Buffered runs whose job has nothing running any more start now. */
  private async promoteBuffered(): Promise<void> {
    const { shards, fences } = heldFences(this.deps.fences);
    if (shards.length === 0) return;
    const { rows } = await query<OccurrenceRow>(this.deps.db, PROMOTE_BUFFERED, [BUFFERED_PER_PASS, plainArray(shards), plainArray(fences)]);
    this.deps.router.afterCommit(firingRefs(rows));
  }
}
