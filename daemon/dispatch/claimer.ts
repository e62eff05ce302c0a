/**
 * The claim: turns runs popped from the fast lane into fired runs, with one
 * fenced, conditional UPDATE per tick for all shards (I-1, I-2 of DESIGN.md).
 * Only what the claim returns is delivered.
 *
 * A popped run the claim did not return is one of: cancelled, already fired,
 * rescheduled later, held back by its recurring job's overlap policy, or on a
 * shard whose fence moved on. The last means ownership is lost: the shard is
 * dropped and nothing more fires for it. Runs held back by overlap become
 * skipped or buffered (OVERLAP_BLOCKED). Runs still scheduled are offered
 * back: at their new due time if they moved (a reschedule the notification
 * missed); if not, the claim skipped them because another transaction holds
 * their row (CLAIM_RUNS locks SKIP LOCKED) or changed it after the claim's
 * snapshot, and they are offered back at once the first time, then every
 * LOCKED_RETRY_MS while that lasts ("retrying", not on every tick).
 * A claim that errors (Postgres away) offers its runs back after a pause. Its
 * outcome is unknown: Postgres may have committed it and died before
 * answering. Such runs are kept "in doubt" (claim time, fence); when the
 * second claim misses them, CLAIMED_IN_DOUBT finds the ones that first claim
 * did fire — ours, never handed out — and they are delivered then. Without
 * that an at-most-once run would stay fired and never reach a worker.
 *
 * Room is per queue (DeliveryHub.fullQueues): the claim leaves the runs of a
 * queue whose parked runs fill its room scheduled, and they wait here, held
 * by queue, until that queue has room again. The heap does not know a run's
 * queue; the claim finds out. So a slow, limited or unserved queue never
 * holds back the claims of the others.
 *
 * States of a popped run: pending (waiting for a claim slot or room) →
 * claiming → delivered, or missed (explained, maybe offered back, maybe
 * retrying: waiting out LOCKED_RETRY_MS), or held (its queue full) →
 * claiming again when the queue has room. A run offered
 * again while its held-back lookup is under way can be in two of these at
 * once; the claim, one conditional UPDATE, fires it once whatever happens.
 * Held runs of a shard we no longer own are dropped about once a second.
 * Open claim watches (watchClaims: one per repair scan in flight) collect the
 * ids of the runs claimed while they are open.
 */
import type { Db } from '../db/pool.js';
import { query, queryPrepared, withClient } from '../db/pool.js';
import { CLAIM_RUNS, CLAIMED_IN_DOUBT, HELD_BACK } from '../db/queries/dispatch.js';
import { SCHEDULED_STATUS, type WindowRow } from '../db/queries/window.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import { TimelaneError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { runRefOf, type RunRef } from '../run-ref.js';
import { dropStaleShards, type ShardFences } from '../coord/fence.js';
import { LOST_VALIDITY_LAPSED } from '../coord/shard-leases.js';
import { CANCEL_OTHERS, OVERLAP_BLOCKED } from '../db/queries/recurring.js';
import { plainArray, textArray } from '../scheduling/pg-arrays.js';
import { HeldQueue, type HeldRun } from './ready-queue.js';

export type { ShardFences } from '../coord/fence.js';

export interface ClaimDeps {
  /** The claim pool: MAX_CLAIMS_IN_FLIGHT + 1 connections, used for nothing else. */
  db: Db;
  /** The general pool: for checking why runs were missed (off the claim pool). */
  readDb: Db;
  /** Takes what the claim returned (the release gate: handed out at due time). */
  fences: ShardFences;
  deliver: (run: FiredRunRow) => void;
  /** Puts runs back in the window (they are still scheduled). */
  reoffer: (run: RunRef) => void;
  /** Tells the worker of a running run to stop (overlap cancel_other). */
  cancelRunning: (runId: number, reason: string) => void;
  metrics: Metrics;
  log: Logger;
  wallNow: () => number;
  /** The window lane fires at most this long before due; the claim accepts runs due within it. @defaultValue 0 */
  claimAheadMs?: number;
  /**
   * How many more runs delivery can take now (DeliveryHub.room). Due runs
   * beyond it wait here, still scheduled in Postgres, until there is room:
   * their lateness shows, and no lease runs out before the hand-out. @defaultValue unbounded
   */
  room?: () => number;
  /** Queues whose room in delivery is used up (DeliveryHub.fullQueues): the claim leaves their runs scheduled. @defaultValue none */
  fullQueues?: () => readonly string[];
  /** How many more runs of a queue delivery can take (DeliveryHub.roomFor). @defaultValue unbounded */
  roomFor?: (queue: string) => number;
}

/** What the claim path holds or has fired since the watch opened (Claimer.watchClaims). */
export interface ClaimWatch {
  has(runId: number): boolean;
  close(): void;
}

/** A run the claim left scheduled because its queue had no room. */
interface HeldBackRow {
  id: number;
  shard: number;
  queue: string;
  priority: number;
  due_at_ms: number;
}

const RETRY_AFTER_ERROR_MS = 250;
/** A run the claim skips again (another transaction holds its row) is tried again after this. */
const LOCKED_RETRY_MS = 100;
/** At most one warning per this long about runs skipped again. */
const LOCK_LOG_MS = 10_000;
/** How long a skipped run is remembered (each skip renews it): a later skip is a first one again. */
const SKIP_MEMORY_MS = 1_000;
/** While delivery has no room, pending runs are looked at again this often. */
const ROOM_POLL_MS = 5;
/** Runs held for a backed-up queue are looked at again this often (its worker frees room at its own pace). */
const HELD_POLL_MS = 20;
/** Held runs of shards we lost are dropped this often. */
const HELD_PRUNE_MS = 1_000;
/** Claim times kept per run in doubt (Postgres away for a minute: 240 retries; the first ones are the likely commit). */
const MAX_DOUBTS_PER_RUN = 64;

/**
 * Claims in flight at once. Runs that come due while they are busy wait in one
 * pending batch and go out together as soon as one returns: under load the
 * claim batches itself, and a claim never queues behind another for a
 * connection (the claim pool has this many).
 */
export const MAX_CLAIMS_IN_FLIGHT = 2;

/**
 * CLAIM_RUNS runs as this prepared statement: Postgres soon stops planning it
 * (its planning cost about a third of its execution). The claim pool is
 * keyedOnly (db/pool.ts), which keeps its generic plan to lookups by id.
 */
export const CLAIM_RUNS_STATEMENT = 'tl_claim_runs';

export class Claimer {
  private inFlight = 0;
  /** Runs popped from the heap, waiting for a claim slot; by run id. */
  private pending = new Map<number, RunRef>();
  private pendingFiredAt = 0;
  /** Runs inside a claim right now: a re-offer of one of them fires nothing new. */
  private readonly claiming = new Set<number>();
  /**
   * Runs whose claim errored after reaching Postgres: the times (epoch ms) of
   * those claims, by run id — while Postgres is away a run is claimed again and
   * again, and any one of them may be the claim that committed.
   */
  private readonly inDoubt = new Map<number, number[]>();
  /** Runs the claim left for their full queue, by queue (best first: priority, then due time); by run id. */
  private readonly held = new Map<string, HeldQueue>();
  /** The queue of each held run: a run offered again while held (a notification, a scan after re-acquiring) is known at once. */
  private readonly heldQueueOf = new Map<number, string>();
  /**
   * Runs skipped by a claim, still scheduled and due as they were (their row
   * locked or changed meanwhile), by run id, with when that was last seen. A
   * next such miss of the same due time within SKIP_MEMORY_MS waits
   * LOCKED_RETRY_MS. Forgotten once claimed, moved or no longer scheduled,
   * and swept once SKIP_MEMORY_MS old (a run cancelled meanwhile is not seen again).
   */
  private readonly skippedOnce = new Map<number, { shard: number; dueAtMs: number; atMs: number }>();
  private skippedSweptAt = 0;
  /** Skipped again: waiting for the retry timer to offer them back (repair scans leave them alone). */
  private readonly retrying = new Map<number, RunRef>();
  private retryTimer: NodeJS.Timeout | undefined;
  private lockLoggedAt = -Infinity;
  /** Held runs let go and inside a claim now, by queue: they take their queue's room until delivered. */
  private readonly unheldClaiming = new Map<string, number>();
  /** Set while pending or held runs wait for delivery room; `roomTimerMs` is its period. */
  private roomTimer: NodeJS.Timeout | undefined;
  private roomTimerMs = 0;
  /** When held runs of shards we no longer own were last dropped (monotonic ms). */
  private heldPrunedAt = 0;
  /** Drained (the daemon is stopping): claims nothing more. */
  private draining = false;
  /** Open watches (watchClaims): each collects the ids of the runs claimed while it is open. */
  private readonly watches = new Set<Set<number>>();

  constructor(private readonly deps: ClaimDeps) {}

  get claimsInFlight(): number {
    return this.inFlight;
  }

  /** Resolves when no claim is pending or in flight (graceful stop), or after `maxMs`. */
  async drain(maxMs: number): Promise<void> {
    const until = performance.now() + maxMs;
    while ((this.inFlight > 0 || (this.pending.size > 0 && this.roomTimer === undefined)) && performance.now() < until)
      await new Promise((r) => setTimeout(r, 5));
    // Runs still waiting for room stay scheduled in Postgres: nothing more is claimed.
    this.draining = true;
    clearTimeout(this.roomTimer);
    this.roomTimer = undefined;
    this.pending.clear();
    this.held.clear();
    this.heldQueueOf.clear();
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retrying.clear();
    this.skippedOnce.clear();
    while (this.inFlight > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
  }

  /** The run is on its way through the claim: pending, inside a claim, held for its queue, or retrying. */
  holds(runId: number): boolean {
    return this.pending.has(runId) || this.claiming.has(runId) || this.heldQueueOf.has(runId) || this.retrying.has(runId);
  }

  /**
   * From now until `close()`: does the claim path hold a run, or has it fired
   * it since? For a repair scan, whose snapshot may predate a claim that
   * committed while the scan was read: such a run is fired, not missing, and
   * offering it back to the heap makes a claim that misses. Skipping a run
   * fired since is safe because a fired run never becomes scheduled again
   * under its id (a retry is a new run; the claim takes scheduled rows only).
   */
  watchClaims(): ClaimWatch {
    const claimed = new Set<number>();
    this.watches.add(claimed);
    return {
      has: (runId) => claimed.has(runId) || this.holds(runId),
      close: () => this.watches.delete(claimed),
    };
  }

  /** Runs found fired by our claims, for the open watches. */
  private noteClaimed(runs: readonly FiredRunRow[]): void {
    for (const watch of this.watches) for (const run of runs) watch.add(run.id);
  }

  /** Due runs held for their queue's room (the timelane_runs_held_back gauge). */
  get heldBack(): number {
    return this.heldQueueOf.size;
  }

  /** Called from the timer with everything due now. Must stay cheap: the write is async. */
  fire(entries: readonly RunRef[], firedAtWallMs: number): void {
    for (const e of entries) {
      if (this.claiming.has(e.runId)) continue;
      if (this.heldQueueOf.has(e.runId)) continue; // offered again (a notification, a rescan): it waits for its queue
      if (this.retrying.has(e.runId)) {
        this.retrying.set(e.runId, e); // offered again while it waits for its retry: one loop per run, the newest offer
        continue;
      }
      const fence = this.deps.fences.fenceOf(e.shard);
      if (fence === undefined) continue;
      if (!this.deps.fences.isValid(e.shard)) {
        this.deps.fences.drop(e.shard, LOST_VALIDITY_LAPSED);
        continue;
      }
      // Measured against the latest moment the lane should have fired it.
      this.deps.metrics.timerLag.observe(Math.max(0, firedAtWallMs - (e.dueAtMs - (this.deps.claimAheadMs ?? 0) / 2)));
      this.pending.set(e.runId, e);
    }
    this.pendingFiredAt = Math.max(this.pendingFiredAt, firedAtWallMs);
    this.flush();
  }

  /**
   * Held runs whose queue has room again, up to that room and `max` in all
   * (they are out of `held` after this).
   */
  private takeUnheld(max: number): HeldRun[] {
    const out: HeldRun[] = [];
    for (const [queue, m] of this.held) {
      let room = Math.min(max - out.length, (this.deps.roomFor?.(queue) ?? Infinity) - (this.unheldClaiming.get(queue) ?? 0));
      // Best first: a high-priority run held behind a backlog goes with the next room, as the hub would hand it out.
      while (room-- > 0) {
        const r = m.shift();
        if (!r) break;
        this.heldQueueOf.delete(r.runId);
        out.push(r);
      }
      if (m.size === 0) this.held.delete(queue);
    }
    return out;
  }

  /**
   * While runs wait for room, looks again shortly: pending runs every
   * ROOM_POLL_MS, held ones (their queue is backed up) less often.
   */
  private pollForRoom(): void {
    const ms = this.pending.size > 0 ? ROOM_POLL_MS : HELD_POLL_MS;
    if (this.roomTimer !== undefined && this.roomTimerMs <= ms) return;
    clearTimeout(this.roomTimer);
    this.roomTimerMs = ms;
    this.roomTimer = setTimeout(() => {
      this.roomTimer = undefined;
      this.flush();
    }, ms).unref();
  }

  /** Drops held runs of shards we no longer own (the new owner fires them), at most once a second. */
  private pruneHeld(): void {
    const now = performance.now();
    if (now - this.heldPrunedAt < HELD_PRUNE_MS) return;
    this.heldPrunedAt = now;
    for (const [queue, m] of this.held) {
      for (const r of m.values())
        if (this.deps.fences.fenceOf(r.shard) === undefined) {
          m.delete(r.runId);
          this.heldQueueOf.delete(r.runId);
        }
      if (m.size === 0) this.held.delete(queue);
    }
  }

  private flush(): void {
    if (this.draining || (this.pending.size === 0 && this.held.size === 0) || this.inFlight >= MAX_CLAIMS_IN_FLIGHT) return;
    // Runs inside a claim now are not in delivery yet: they take room too.
    let room = (this.deps.room?.() ?? Infinity) - this.claiming.size;
    if (room <= 0) {
      this.pollForRoom();
      return;
    }
    // Held runs first (they are the most overdue), each bounded by its own queue's room.
    if (this.held.size > 0) this.pruneHeld();
    const unheld = this.held.size > 0 ? this.takeUnheld(room) : [];
    const runs: RunRef[] = [...unheld];
    room -= unheld.length;
    const firedAt = this.pendingFiredAt;
    if (this.pending.size <= room) {
      for (const r of this.pending.values()) runs.push(r);
      this.pending = new Map();
      this.pendingFiredAt = 0;
    } else if (room > 0) {
      // The earliest first: pending keeps the lane's fire order (deadline, then priority).
      let taken = 0;
      for (const r of this.pending.values()) {
        if (taken++ >= room) break;
        runs.push(r);
        this.pending.delete(r.runId);
      }
    }
    if (this.held.size > 0) this.pollForRoom();
    // Fences are read now, not at pop time: a shard dropped meanwhile fires nothing.
    const fences = new Map<number, number>();
    const batch: RunRef[] = [];
    for (const r of runs) {
      const fence = this.deps.fences.fenceOf(r.shard);
      if (fence === undefined) continue;
      fences.set(r.shard, fence);
      batch.push(r);
      this.claiming.add(r.runId);
    }
    if (batch.length === 0) {
      // Everything taken was on shards dropped meanwhile: look again for the rest.
      if (this.pending.size > 0 || this.held.size > 0) this.pollForRoom();
      return;
    }
    const full = this.deps.fullQueues?.() ?? [];
    for (const r of unheld) this.unheldClaiming.set(r.queue, (this.unheldClaiming.get(r.queue) ?? 0) + 1);
    this.inFlight++;
    void this.claim(batch, fences, firedAt, full).finally(() => {
      this.inFlight--;
      for (const r of batch) this.claiming.delete(r.runId);
      for (const r of unheld) {
        const n = (this.unheldClaiming.get(r.queue) ?? 1) - 1;
        if (n > 0) this.unheldClaiming.set(r.queue, n);
        else this.unheldClaiming.delete(r.queue);
      }
      this.flush();
    });
  }

  private async claim(runs: RunRef[], fences: Map<number, number>, firedAtWallMs: number, full: readonly string[]): Promise<void> {
    const ids = runs.map((r) => r.runId);
    const shards = [...fences.keys()];
    let claimed: FiredRunRow[];
    let at = 0;
    let params: unknown[] = [];
    try {
      // The fire time is taken once a connection is in hand, so a wait for the
      // pool (or for Postgres to come back) shows in the recorded lag.
      ({ rows: claimed } = await withClient(this.deps.db, (c) => {
        at = Math.floor(Math.max(firedAtWallMs, this.deps.wallNow()));
        params = [plainArray(ids), plainArray(shards), plainArray(shards.map((s) => fences.get(s)!)), at, this.deps.claimAheadMs ?? 0, textArray(full)];
        return queryPrepared<FiredRunRow>(c, CLAIM_RUNS_STATEMENT, CLAIM_RUNS, params);
      }));
    } catch (err) {
      // Sent (a connection was in hand): it may have committed.
      if (at > 0)
        for (const id of ids) {
          const times = this.inDoubt.get(id) ?? [];
          if (times.length < MAX_DOUBTS_PER_RUN) times.push(at);
          this.inDoubt.set(id, times);
        }
      this.deps.log.warn({ err: String(err), runs: ids.length, inDoubt: at > 0 }, 'claim failed; runs go back to the window');
      this.reofferAfterError(runs);
      return;
    }
    const doubts = this.inDoubt.size > 0; // almost always empty: keep the fire loop to one check
    this.noteClaimed(claimed);
    const skipped = this.skippedOnce.size > 0;
    for (const run of claimed) {
      if (doubts) this.inDoubt.delete(run.id);
      if (skipped) this.skippedOnce.delete(run.id);
      this.deps.metrics.fired.inc();
      try {
        this.deps.deliver(run);
      } catch (err) {
        // Never let one run's hand-off take the rest of the batch (or the process) down.
        this.deps.log.error({ err, runId: run.id }, 'could not hand a claimed run over');
      }
    }
    if (claimed.length < ids.length) {
      const got = new Set(claimed.map((r) => r.id));
      const missed = runs.filter((r) => !got.has(r.runId));
      // Detached: the claim slot is free for the next batch meanwhile.
      void (full.length > 0 ? this.holdBack(missed, params) : Promise.resolve(missed))
        .then((rest) => (rest.length > 0 ? this.explainOrRetry(rest, fences) : undefined))
        .catch((err: unknown) => this.deps.log.error({ err: String(err) }, 'could not sort claim misses'));
    }
  }

  /**
   * Of the runs a claim missed, keeps those it left for their full queue
   * (held until the queue has room); returns the others. HELD_BACK is asked
   * with the claim's own parameters (the runs it fired no longer match).
   * Should the lookup fail, all of them are explained as misses (those still
   * scheduled are offered back, and claimed again later).
   */
  private async holdBack(missed: RunRef[], claimParams: unknown[]): Promise<RunRef[]> {
    let rows: HeldBackRow[];
    try {
      ({ rows } = await query<HeldBackRow>(this.deps.readDb, HELD_BACK, claimParams));
    } catch (err) {
      this.deps.log.warn({ err: String(err), runs: missed.length }, 'could not look up runs held back for their queue; explaining them as misses');
      return missed;
    }
    if (rows.length === 0 || this.draining) return missed;
    const kept = new Set<number>();
    for (const r of rows) {
      let m = this.held.get(r.queue);
      if (!m) this.held.set(r.queue, (m = new HeldQueue()));
      m.set({ runId: r.id, shard: r.shard, dueAtMs: r.due_at_ms, priority: r.priority, queue: r.queue });
      this.heldQueueOf.set(r.id, r.queue);
      kept.add(r.id);
    }
    this.pollForRoom();
    return missed.filter((m) => !kept.has(m.runId));
  }

  /** Delivers the missed runs an earlier, errored claim did fire; returns the others. */
  private async resolveInDoubt(missed: RunRef[], fences: Map<number, number>): Promise<RunRef[]> {
    const doubtful = missed.filter((m) => this.inDoubt.has(m.runId));
    if (doubtful.length === 0) return missed;
    const shards = [...new Set(doubtful.map((m) => m.shard))];
    const pairs = doubtful.flatMap((m) => this.inDoubt.get(m.runId)!.map((at) => [m.runId, at] as const));
    const ats = pairs.map((p) => p[1]);
    let rows: FiredRunRow[];
    try {
      ({ rows } = await query<FiredRunRow>(this.deps.readDb, CLAIMED_IN_DOUBT, [
        plainArray(pairs.map((p) => p[0])),
        plainArray(shards),
        plainArray(shards.map((s) => fences.get(s) ?? 0)),
        plainArray(ats),
      ]));
    } catch (err) {
      // Postgres is not back yet: still in doubt. Offer them again later; their next miss asks again.
      this.deps.log.warn({ err: String(err), runs: doubtful.length }, 'could not check claims in doubt; trying again');
      this.reofferAfterError(missed);
      return [];
    }
    for (const m of doubtful) this.inDoubt.delete(m.runId);
    if (rows.length > 0) this.deps.log.warn({ runs: rows.length }, 'an errored claim had fired runs after all (committed, answer lost): delivering them now');
    this.noteClaimed(rows);
    for (const run of rows) {
      this.skippedOnce.delete(run.id);
      this.deps.metrics.fired.inc();
      try {
        this.deps.deliver(run);
      } catch (err) {
        this.deps.log.error({ err, runId: run.id }, 'could not hand a claimed run over');
      }
    }
    const found = new Set(rows.map((r) => r.id));
    return missed.filter((m) => !found.has(m.runId));
  }

  /**
   * explainMisses, and should a check fail for want of Postgres (away, a
   * dropped or silent connection), the runs are offered again after a pause,
   * as after a failed claim: the claim fires each at most once, and a run no
   * longer scheduled is only missed again. Left out, a missed run still
   * scheduled would wait for the repair scan. Any other error is logged and
   * not retried (it would fail the same way, four times a second).
   */
  private async explainOrRetry(missed: RunRef[], fences: Map<number, number>): Promise<void> {
    try {
      await this.explainMisses(missed, fences);
    } catch (err) {
      const retry = err instanceof TimelaneError && err.kind === 'unavailable';
      this.deps.log.warn({ err: String(err), runs: missed.length, retry }, retry ? 'could not check claim misses; offering them again' : 'could not check claim misses');
      if (retry) this.reofferAfterError(missed);
    }
  }

  /** Back to the window after a pause: Postgres was not there to claim them or to say why they were missed. */
  private reofferAfterError(runs: readonly RunRef[]): void {
    setTimeout(() => runs.forEach((r) => this.deps.reoffer(r)), RETRY_AFTER_ERROR_MS);
  }

  private async explainMisses(missed: RunRef[], fences: Map<number, number>): Promise<void> {
    this.deps.metrics.claimMisses.inc(missed.length);
    const missedShards = new Map([...new Set(missed.map((m) => m.shard))].map((s) => [s, fences.get(s) ?? 0]));
    const stale = await dropStaleShards(this.deps.readDb, this.deps.fences, missedShards, this.deps.log);
    for (const m of missed) if (stale.has(m.shard)) this.inDoubt.delete(m.runId);
    const notStale = missed.filter((m) => !stale.has(m.shard));
    const live = await this.resolveInDoubt(notStale, fences);
    if (live.length === 0) return;
    const held = await resolveOverlaps(this.deps.readDb, live, fences);
    for (const outcome of ['skipped', 'buffered'] as const) {
      const n = held.filter((h) => h.status === outcome).length;
      if (n > 0) this.deps.metrics.occurrences.inc({ outcome }, n);
    }
    const cancelOthers = held.filter((h) => h.overlap === 'cancel_other' && h.status === 'buffered').map((h) => h.id);
    if (cancelOthers.length > 0) {
      const shards = [...new Set(live.map((r) => r.shard))];
      const { rows } = await query<{ id: number }>(this.deps.readDb, CANCEL_OTHERS, [plainArray(cancelOthers), plainArray(shards)]);
      for (const r of rows) this.deps.cancelRunning(r.id, 'a newer occurrence is due (overlap cancel_other)');
    }
    const heldIds = new Set(held.map((h) => h.id));
    for (const id of heldIds) this.skippedOnce.delete(id);
    const maybe = live.filter((m) => !heldIds.has(m.runId));
    if (maybe.length === 0) return;
    const { rows: still } = await query<WindowRow>(this.deps.readDb, SCHEDULED_STATUS, [maybe.map((m) => m.runId), [...new Set(maybe.map((m) => m.shard))]]);
    const tried = new Map(maybe.map((m) => [m.runId, m.dueAtMs]));
    this.sweepSkipped();
    const stillIds = new Set<number>();
    for (const r of still) {
      const run = runRefOf(r);
      stillIds.add(run.runId);
      if (tried.get(run.runId) !== run.dueAtMs) {
        this.skippedOnce.delete(run.runId);
        this.deps.reoffer(run); // moved (a reschedule the notification missed)
      } else this.skippedAgain(run);
    }
    for (const m of maybe) if (!stillIds.has(m.runId)) this.skippedOnce.delete(m.runId);
  }

  /**
   * A run the claim skipped, still scheduled and due as it was: its row is
   * held by another transaction (or was changed after the claim's snapshot).
   * Offered back at once the first time; while it keeps being skipped, every
   * LOCKED_RETRY_MS, so a lock that lasts costs ten claims a second, not one per tick.
   */
  private skippedAgain(run: RunRef): void {
    if (this.draining || this.deps.fences.fenceOf(run.shard) === undefined) return;
    const now = performance.now();
    const seen = this.skippedOnce.get(run.runId);
    if (seen === undefined || seen.dueAtMs !== run.dueAtMs || now - seen.atMs > SKIP_MEMORY_MS) {
      this.skippedOnce.set(run.runId, { shard: run.shard, dueAtMs: run.dueAtMs, atMs: now });
      this.deps.reoffer(run);
      return;
    }
    seen.atMs = now;
    if (now - this.lockLoggedAt >= LOCK_LOG_MS) {
      this.lockLoggedAt = now;
      this.deps.log.warn({ runId: run.runId, shard: run.shard, retryMs: LOCKED_RETRY_MS }, 'claim skipped a due run again (its row locked or changed by another transaction); trying it again shortly');
    }
    this.retrying.set(run.runId, run);
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      const runs = [...this.retrying.values()];
      this.retrying.clear();
      for (const r of runs) if (this.deps.fences.fenceOf(r.shard) !== undefined) this.deps.reoffer(r);
    }, LOCKED_RETRY_MS).unref();
  }

  /** Forgets skipped runs not seen for SKIP_MEMORY_MS or of shards we lost; at most once per SKIP_MEMORY_MS (one pass, not one per skip). */
  private sweepSkipped(): void {
    const now = performance.now();
    if (this.skippedOnce.size === 0 || now - this.skippedSweptAt < SKIP_MEMORY_MS) return;
    this.skippedSweptAt = now;
    for (const [id, seen] of this.skippedOnce) if (now - seen.atMs > SKIP_MEMORY_MS || this.deps.fences.fenceOf(seen.shard) === undefined) this.skippedOnce.delete(id);
  }
}

/** Runs the claim held back for their job's overlap policy become skipped or buffered (fenced, like the claim). */
async function resolveOverlaps(db: Db, runs: readonly RunRef[], fences: ReadonlyMap<number, number>): Promise<{ id: number; status: 'skipped' | 'buffered'; overlap: string }[]> {
  const shards = [...new Set(runs.map((r) => r.shard))];
  const { rows } = await query<{ id: number; status: 'skipped' | 'buffered'; overlap: string }>(db, OVERLAP_BLOCKED, [
    plainArray(runs.map((r) => r.runId)),
    plainArray(shards),
    plainArray(shards.map((s) => fences.get(s) ?? 0)),
  ]);
  return rows;
}
