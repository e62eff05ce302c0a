/**
 * The fire engine: the whole firing path for the shards this daemon owns,
 * as one component, read top to bottom:
 *
 *   loader ──offer──▶ heap/timer ──due──▶ claim ──claimed──▶ release gate
 *   (slow/loader)     (fast/fast-lane)    (dispatch/claimer)  (dispatch/release-gate)
 *        ──at due──▶ delivery hub ──RunBatch──▶ worker streams ──answers──▶ Answers
 *                    (dispatch/delivery-hub)                   (dispatch/answers)
 *
 * A claimed run a worker can hold (staging) skips the wait in the gate: it
 * goes to the hub at once, with the time left until due, and its worker
 * starts it then.
 *
 * A workflow step's Complete shortcuts the middle: its transaction fires the
 * children it made ready on our shards (fenced, as a claim is) and hands them
 * to the release gate on commit (router `firing`, workflows/step-transitions).
 *
 * plus the materialiser (recurring jobs' next occurrences made into runs
 * ahead of time, and buffered runs started), the workflow repair pass (the
 * safety net under workflow steps' event-driven dispatch), the redelivery reaper (expired
 * leases back to the hub), the hand-off recorder (fired_at of unanswered
 * deliveries), the near-due listener (runs committed by other daemons), and
 * the router every committed run goes through. The daemon wires it to leases and gRPC and runs its life cycle;
 * integration tests build this very component.
 *
 * States: constructed → running (start) → draining (drain: no new fires;
 * claims in flight finish; the redelivery reaper stops; claimed runs are
 * released to workers, since they are `fired` in Postgres, and runs staged
 * at workers reach their due time (started there, answered on open
 * streams); runs still parked for worker credit, or still in the gate, go
 * back with their lease ended, for the next owner to redeliver. A run
 * cancelled meanwhile before its hand-out is ended by the next owner's
 * reaper) → stopped (stop).
 *
 * Owns its pools' use, not the pools: claims, answers and window work each get
 * connections no API query can take (DESIGN: work that proves ownership never
 * waits behind work that serves clients).
 */
import type pg from 'pg';
import { primeConnections, type Db } from '../db/pool.js';
import { CLAIM_RUNS, COMPLETE_RUNS } from '../db/queries/dispatch.js';
import type { Clock } from '../fast/clock.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { FastLane } from '../fast/fast-lane.js';
import { WindowLoader } from '../slow/loader.js';
import { NearDueListener } from '../slow/notifications.js';
import { CLAIM_RUNS_STATEMENT, Claimer } from '../dispatch/claimer.js';
import { ReleaseGate } from '../dispatch/release-gate.js';
import { DeliveryHub } from '../dispatch/delivery-hub.js';
import { Answers, COMPLETE_RUNS_STATEMENT } from '../dispatch/answers.js';
import { StepTransitions } from '../workflows/step-transitions.js';
import { RedeliveryReaper } from '../dispatch/redelivery.js';
import { TimelaneError } from '../errors.js';
import type { FenceArrays, ShardFences } from '../coord/fence.js';
import type { RunRef } from '../run-ref.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import { RunRouter } from './router.js';
import { warmUp } from './warm-up.js';
import { Materialiser } from '../recurring/materialiser.js';
import { OCCURRENCE_LATE_AFTER_MS } from '../recurring/recurrence.js';
import { PermitSweeper, QueueLimitsCache, deliveryGate, type PermitStore } from '../dispatch/queue-limits.js';
import { WorkflowRepair } from '../workflows/repair.js';
import type { RunTracing } from '../tracing/run-tracing.js';

export interface EnginePools {
  /** Claims only (MAX_CLAIMS_IN_FLIGHT + 1 connections). */
  claim: Db;
  /** Worker answers and hand-off records. */
  answer: Db;
  /** COMPLETE_RUNS only: a keyedOnly pool (db/pool.ts), for its prepared plan. */
  complete: Db;
  /** Window loads, repairs, redeliveries, miss checks. */
  window: Db;
}

export interface FireEngineOptions {
  pools: EnginePools;
  /** The lease manager's view of our fences. */
  fences: ShardFences;
  clock: Clock;
  metrics: Metrics;
  log: Logger;
  schema: string;
  /** Runs due within this many ms are kept in memory. */
  windowMs: number;
  /** Recurring jobs' occurrences are made into runs this far ahead (≥ windowMs). @defaultValue windowMs */
  materialiseAheadMs?: number;
  maxInWindow: number;
  loadIntervalMs: number;
  repairIntervalMs: number;
  reapIntervalMs: number;
  /** Claim this long before due; released to workers exactly at due. 0: claim at due. */
  claimAheadMs: number;
  /** The dedicated LISTEN connection's config; null: no listener (single daemon, or tests). */
  listen: pg.ClientConfig | null;
  /** The LISTEN connection is probed this often and dropped when a probe goes unanswered as long (NearDueListener). @defaultValue 0 (no probe) */
  listenProbeMs?: number;
  /** Where per-queue delivery permits live: Redis in a cluster, this process otherwise. */
  permits: PermitStore;
  /** Claim spans of each claimed or redelivered run; null or absent: none (and no per-run cost). */
  tracing?: RunTracing | null;
  /** prime() runs this many synthetic runs through the per-run code first (warm-up.ts). @defaultValue 0 */
  warmUpRuns?: number;
}

/** Unanswered deliveries get their hand-off time written after this long. */
const RECORD_HAND_OFF_AFTER_MS = 1_000;
/**
 * A cancel that found its run nowhere here is kept at least this long (it is
 * forgotten at a later cancel): the run's claim may still return it (a claim
 * is bounded by the statement timeout, 10 s by default). Every member hears
 * every cancel, so at most this many are kept.
 */
const CANCEL_MEMORY_MS = 15_000;
const MAX_CANCELS_REMEMBERED = 10_000;

/** The shards we hold whose lease is provably valid, as fenced-statement parameters (what a claim would fire under). */
function validFences(fences: ShardFences): FenceArrays {
  const valid = fences.owned().filter((o) => fences.isValid(o.shard));
  return { shards: valid.map((o) => o.shard), fences: valid.map((o) => o.fence) };
}

export class FireEngine {
  readonly lane: FastLane;
  readonly loader: WindowLoader;
  readonly claimer: Claimer;
  readonly gate: ReleaseGate;
  /** Runs asked to stop that were nowhere here yet (their claim under way), by when (performance.now()). */
  private readonly cancelledLately = new Map<number, number>();
  readonly hub: DeliveryHub;
  readonly answers: Answers;
  readonly router: RunRouter;
  readonly materialiser: Materialiser;
  /** Workflow runs the event path left with something to do (the safety net). */
  readonly workflowRepair: WorkflowRepair;
  readonly queueLimits: QueueLimitsCache;
  /** Gives back permits whose runs are no longer fired. */
  readonly permitSweeper: PermitSweeper;
  private readonly reaper: RedeliveryReaper;
  private readonly listener: NearDueListener | null;
  private handOffTimer: NodeJS.Timeout | null = null;
  /** Running (not draining or stopped): transactions may fire the runs they make. */
  private firing = false;

  constructor(private readonly opts: FireEngineOptions) {
    const { clock, metrics, log, pools, fences } = opts;
    const tracing = opts.tracing ?? null;
    this.router = new RunRouter({
      schema: opts.schema,
      windowMs: opts.windowMs,
      wallNow: () => clock.wallNow(),
      owns: (shard) => fences.fenceOf(shard) !== undefined,
      offerLocal: (run) => this.loader.offer(run),
      cancelLocal: (runId, reason) => this.cancelRunning(runId, reason),
      // Workflow steps due now on our shards are fired by the transaction that makes them, then go to 4.
      firing: {
        fences: () => (this.firing ? validFences(fences) : { shards: [], fences: [] }),
        deliver: (run) => {
          metrics.fired.inc();
          // Fired by the transaction that made it: this is its claim (and its trace's start).
          tracing?.claimed(run, false);
          this.admit(run);
        },
      },
    });

    // 1. The heap and its timer: runs leave it claimAheadMs before due, in buckets.
    this.lane = new FastLane({
      clock,
      leadMs: opts.claimAheadMs / 2,
      gatherMs: opts.claimAheadMs / 2,
      // With a lead, precision is the release gate's job: this lane need not spin.
      earlyMs: opts.claimAheadMs > 0 ? 0 : undefined,
      spin: opts.claimAheadMs <= 0,
      onFire: (entries, firedAt) => this.claimer.fire(entries, firedAt),
      onClockStep: (delta) => {
        metrics.clockSteps.inc();
        log.warn({ deltaMs: delta }, 'wall clock stepped; heap re-based');
      },
    });
    // 2. The loader fills the heap from Postgres. Its repair scan skips what the claim (3) holds or fired meanwhile.
    this.loader = new WindowLoader(pools.window, this.lane, clock, log, {
      windowMs: opts.windowMs,
      maxInWindow: opts.maxInWindow,
      loadIntervalMs: opts.loadIntervalMs,
      repairIntervalMs: opts.repairIntervalMs,
      watchClaims: () => this.claimer.watchClaims(),
    });
    // 3. The fenced claim; what it returns goes to 4.
    this.claimer = new Claimer({
      db: pools.claim,
      readDb: pools.window,
      fences,
      deliver: tracing
        ? (run) => {
            tracing.claimed(run, false);
            this.admit(run);
          }
        : (run) => this.admit(run),
      reoffer: (run) => this.loader.offer(run),
      cancelRunning: (runId, reason) => this.cancelRunning(runId, reason),
      metrics,
      log,
      wallNow: () => clock.wallNow(),
      claimAheadMs: opts.claimAheadMs,
      // Runs claimed ahead and held for their due time are on their way to delivery too.
      room: () => this.hub.room() - this.gate.size,
      // Room is per queue: a full queue's runs are left scheduled by the claim, and the others go on.
      fullQueues: () => this.hub.fullQueues(),
      roomFor: (queue) => this.hub.roomFor(queue),
    });
    // 4. The release gate holds claimed runs until they are due, then 5.
    this.gate = new ReleaseGate(
      clock,
      (run) => {
        metrics.fireLag.observe(Math.max(0, clock.wallNow() - run.due_at_ms));
        this.hub.deliver(run);
      },
      (err, run) => log.error({ err, runId: run.id }, 'could not deliver a released run'),
      (run, startInMs) => {
        let staged: boolean;
        try {
          staged = this.hub.stage(run, startInMs);
        } catch (err) {
          // Thrown after the hand-over (a sink's write) it went out: not held here too, or it could start twice.
          log.error({ err, runId: run.id }, 'could not stage a claimed run');
          staged = this.hub.handedOut(run.id);
        }
        if (!staged) return false;
        metrics.staged.inc();
        metrics.fireLag.observe(0);
        return true;
      },
    );
    // 5. The hub hands runs to worker streams within their credit (and their queue's limits).
    this.queueLimits = new QueueLimitsCache(pools.window, log);
    this.permitSweeper = new PermitSweeper(pools.window, this.queueLimits, opts.permits, log, {
      inFlightOf: (queue) => this.hub.inFlightOf(queue),
      adopt: (queue, runIds) => this.hub.adoptInFlight(queue, runIds),
    });
    // A run that waited for credit gets its lease restarted as it is handed out.
    this.hub = new DeliveryHub(
      undefined,
      (run) =>
        this.answers.heartbeat({ runId: run.id, shard: run.shard, fence: run.fence, deliveries: run.deliveries, sentAtMs: null }, null, null).catch((err: unknown) => {
          if (err instanceof TimelaneError && err.kind === 'failed_precondition') return null; // superseded meanwhile
          throw err;
        }),
      () => clock.wallNow(),
      deliveryGate(this.queueLimits, opts.permits, log),
    );
    this.queueLimits.onBounded = (queues) => queues.forEach((q) => this.hub.adoptInFlight(q));
    // 6. Answers (and retries, routed inside their transaction).
    this.answers = new Answers(pools.answer, this.router, new StepTransitions(this.router), pools.complete, opts.log);
    // 0. Recurring jobs: occurrences due within the window become runs (offered to 2 by the router).
    this.materialiser = new Materialiser({
      db: pools.window,
      fences,
      router: this.router,
      wallNow: () => clock.wallNow(),
      log,
      metrics,
      intervalMs: opts.loadIntervalMs,
      aheadMs: Math.max(opts.windowMs, opts.materialiseAheadMs ?? 0),
      lateToleranceMs: OCCURRENCE_LATE_AFTER_MS,
    });
    // A safety net, like the window's repair scan: the same interval.
    this.workflowRepair = new WorkflowRepair({ db: pools.window, fences, router: this.router, log, intervalMs: opts.repairIntervalMs });
    const redeliver = (run: FiredRunRow): void => {
      tracing?.claimed(run, true);
      // One whose stream closed before it was due (it was staged) is not due yet: it waits in the gate.
      if (run.due_at_ms > clock.wallNow()) this.gate.admit(run);
      else this.hub.deliver(run);
    };
    this.reaper = new RedeliveryReaper(
      pools.window,
      fences,
      redeliver,
      metrics,
      log,
      opts.reapIntervalMs,
      (ids) => ids.forEach((id) => this.hub.drop(id)),
      () => this.workflowRepair.kick(),
      () => this.hub.unsentIds(),
    );
    this.listener = opts.listen
      ? new NearDueListener({
          clientConfig: opts.listen,
          schema: opts.schema,
          log,
          onRuns: (runs) => runs.forEach((r) => this.loader.offer(r)),
          onCancel: (n) => n.runIds.forEach((id) => this.cancelRunning(id, n.reason)),
          onReconnect: () => this.loader.requestRepair(),
          probeEveryMs: opts.listenProbeMs,
        })
      : null;
  }

  /**
   * Opens the claim and answer connections and plans their statements once,
   * so the first claims of a burst do not pay a new backend's catalog loads;
   * then warms the per-run code up (warmUpRuns, warm-up.ts).
   * Before start(); the pools keep these connections open. Best effort: a
   * failure (Postgres slow, near its connection limit, a migration holding a
   * lock) is logged and the engine starts anyway, connecting as it goes.
   */
  async prime(): Promise<void> {
    const none: unknown[] = [];
    const results = await Promise.allSettled([
      primeConnections(this.opts.pools.claim, [{ name: CLAIM_RUNS_STATEMENT, text: CLAIM_RUNS, values: [none, none, none, 0, 0, '{}'] }]),
      primeConnections(this.opts.pools.complete, [{ name: COMPLETE_RUNS_STATEMENT, text: COMPLETE_RUNS, values: [none, none, none, none, none] }]),
      primeConnections(this.opts.pools.answer, [{ text: COMPLETE_RUNS, values: [none, none, none, none, none] }]),
    ]);
    for (const r of results) {
      if (r.status === 'rejected') this.opts.log.warn({ err: String(r.reason) }, 'could not prime the engine connections: starting without');
    }
    const runs = this.opts.warmUpRuns ?? 0;
    if (runs > 0) {
      try {
        const report = await warmUp(this.opts.pools.window, this.answers, this.opts.clock, runs);
        this.opts.log.info({ runs: report.runs, ms: Math.round(report.ms) }, 'fire path warmed up');
      } catch (err) {
        this.opts.log.warn({ err: String(err) }, 'could not warm the fire path up: starting cold');
      }
    }
  }

  start(): void {
    this.firing = true;
    this.gate.start();
    this.queueLimits.start();
    this.permitSweeper.start();
    this.lane.start();
    this.loader.start();
    this.materialiser.start();
    this.workflowRepair.start();
    this.listener?.start();
    this.reaper.start();
    this.handOffTimer = setInterval(() => {
      this.recordHandOffs().catch((err: unknown) => {
        // Best effort: the answer (or the next hand-off) records it otherwise.
        this.opts.log.warn({ err: String(err) }, 'could not record hand-off times');
      });
    }, RECORD_HAND_OFF_AFTER_MS / 2);
  }

  /** Stop firing; let what was already claimed reach the workers (those runs are `fired` in Postgres). */
  async drain(): Promise<void> {
    this.firing = false;
    this.lane.stop();
    await this.materialiser.stop();
    await this.workflowRepair.stop();
    await this.claimer.drain(2_000);
    // No more redeliveries here: a pass from now on would take runs again with
    // a fresh lease — runs handed back below, or those of a stream closing
    // while we wait — park them here or in the gate, and they would die with
    // this process (the next owner then waits out that lease).
    await this.reaper.stop();
    await this.gate.drain(this.opts.claimAheadMs + 100);
    // Runs staged at workers start at their due time: wait for it, so that they are answered on streams still open.
    const staged = Math.min(this.hub.lastStagedStart() - this.opts.clock.wallNow(), this.opts.claimAheadMs + 100);
    if (staged > 0) await new Promise((r) => setTimeout(r, staged));
    // Runs still parked for credit, or still in the gate (its drain timed out): their leases end now, so
    // the next owner redelivers them at once rather than after a whole lease.
    const parked = [...this.hub.takeParked(), ...this.gate.takeAll()];
    await this.answers
      .expire(parked.map((r) => ({ runId: r.id, shard: r.shard, fence: r.fence, deliveries: r.deliveries, sentAtMs: null })))
      .catch((err: unknown) => this.opts.log.warn({ err: String(err), runs: parked.length }, 'could not hand back runs parked for credit'));
    // Completes waiting for a row lock: UNAVAILABLE now (their workers send them again), not a stop held up by someone else's lock.
    this.answers.close();
  }

  /** After drain() and after the shards were released. */
  async stop(): Promise<void> {
    this.firing = false;
    this.lane.stop();
    this.gate.stop();
    this.queueLimits.stop();
    if (this.handOffTimer) clearInterval(this.handOffTimer);
    await this.permitSweeper.stop();
    await this.loader.stop();
    await this.materialiser.stop();
    await this.workflowRepair.stop();
    await this.reaper.stop();
    await this.listener?.stop();
  }

  /** A shard was acquired: load it, and re-scan once a lease TTL has passed (a late commit from the old owner's era). */
  addShard(shard: number, repairAfterMs: number): void {
    this.loader.addShard(shard);
    this.loader.requestRepairAfter(repairAfterMs);
    this.materialiser.kick();
    this.workflowRepair.kick();
  }

  /**
   * A shard was lost or released: forget its window. Runs already claimed
   * under our fence (in the gate, or parked for credit) are still delivered:
   * the new owner sees them as fired and will not fire them again until
   * their lease runs out. One parked here past its lease the new owner's
   * reaper hands out again at once (only this daemon's reaper leaves it
   * alone); this copy's lease restart then finds it superseded, and drops it.
   */
  removeShard(shard: number): void {
    this.loader.removeShard(shard);
  }

  /** The router's local door (also for runs learnt of by notification). */
  offer(run: RunRef): void {
    this.loader.offer(run);
  }

  /** A run was cancelled: drop it from memory if it is here. */
  forget(runId: number): void {
    this.lane.cancel(runId);
  }

  /**
   * A fired run was asked to stop (it is marked in Postgres): tell the
   * worker stream holding it. One not handed out yet — held in the release
   * gate until its due time (claimed ahead), parked for credit, or holding
   * credit while its lease restarts before the hand-out — never goes out: its lease ends now, and the reaper ends it as cancelled. One
   * whose claim has not returned yet is remembered, and ends so when it does.
   */
  cancelRunning(runId: number, reason: string): void {
    const held = this.gate.take(runId);
    // The hub too: a newer copy (redelivered by the reaper) may be out while an older one waited in the gate.
    const { told, parked, renewed } = this.hub.cancel(runId, reason);
    if (held) this.endCancelled(held);
    // One whose lease was restarting before its hand-out: ended after the restart, which would otherwise undo it.
    if (parked) void (renewed ?? Promise.resolve()).then(() => this.endCancelled(parked));
    if (held || parked || told) return;
    // Oldest first (insertion order): stop at the first one still fresh.
    const now = performance.now();
    for (const [id, at] of this.cancelledLately) {
      if (now - at <= CANCEL_MEMORY_MS && this.cancelledLately.size < MAX_CANCELS_REMEMBERED) break;
      this.cancelledLately.delete(id);
    }
    this.cancelledLately.delete(runId);
    this.cancelledLately.set(runId, now);
  }

  /** A claimed run goes to the release gate, unless its job was cancelled while its claim was under way. */
  private admit(run: FiredRunRow): void {
    if (this.cancelledLately.size > 0 && this.cancelledLately.delete(run.id)) return this.endCancelled(run);
    this.gate.admit(run);
  }

  /** A cancelled run never handed out: its lease ends now, and the reaper ends it as cancelled. */
  private endCancelled(run: FiredRunRow): void {
    this.answers
      .expire([{ runId: run.id, shard: run.shard, fence: run.fence, deliveries: run.deliveries, sentAtMs: null }])
      .then(() => this.reaper.kick())
      .catch((err: unknown) => this.opts.log.warn({ err: String(err), runId: run.id }, 'could not end the lease of a cancelled run'));
  }

  /** A worker stream closed and its deliveries were expired: redeliver them now. */
  redeliverNow(): void {
    this.reaper.kick();
  }

  /**
   * Write the hand-off time of deliveries unanswered for `olderThanMs`: a run
   * whose worker takes long still shows when it was handed over.
   */
  async recordHandOffs(olderThanMs = RECORD_HAND_OFF_AFTER_MS): Promise<void> {
    const due = this.hub.takeUnrecorded(this.opts.clock.wallNow() - olderThanMs + 1);
    await this.answers.recordHandOffs(due); // also those of answers Postgres could not take
  }
}
