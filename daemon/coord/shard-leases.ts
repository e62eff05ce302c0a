import { performance } from 'node:perf_hooks';
import type { Logger } from '../log.js';
import type { LeaseBackend, ShardLease } from './lease.js';

/**
 * ShardLeaseManager: which shards this daemon owns, and keeping them owned.
 *
 * Owns the renewal loop and the acquire loop over one `LeaseBackend`, the set
 * of desired shards, and the live lease (with its fence) of every held shard.
 * It does not own the backend (the caller closes it).
 *
 * Per shard:  wanted ──acquire──▶ acquiring ──lease──▶ held ──▶ lost | released
 *                 ▲                   │ null / timeout          │
 *                 └───────────────────┴─────────────────────────┘ (still desired: retried)
 * - wanted: in the desired set, not held; tried every min(ttl/4, 150 ms) (jittered), at
 *   most `acquireConcurrency` attempts at once, or at once via acquireNow(). When an
 *   attempt is refused and the backend can tell how long the holder's lease still
 *   runs (`heldForMs`), one more attempt is armed for that instant: a dead or frozen
 *   holder's shard is taken when its lease lapses, not up to a tick later.
 * - held: `onAcquired` was called; extended every ttl/3, all shards in parallel
 *   (started RENEW_CHUNK per turn of the event loop, so due runs' timers get in).
 * - lost: the first failed (or timed-out) extend, validity on the monotonic
 *   clock running out before an extend succeeded (e.g. the process was
 *   SIGSTOPped: on wake the shard is dropped before any extend is tried), or
 *   `drop()` from the claim path when Postgres says the fence is stale.
 * - released: no longer desired (graceful handoff), or stop().
 * Leaving `held` always calls `onLost(shard, reason)` first, then releases the
 * lease best-effort, so the caller stops firing before a peer can take over.
 *
 * Invariants:
 * - a shard is in `held` only while its lease is believed valid; `isValid`
 *   additionally proves it against the monotonic clock at the time of asking;
 * - no backend call is awaited past the lease's validity: extends race a timer
 *   to `validUntilMono`, acquires race a timer of one TTL (a late lease is
 *   given back);
 * - every extend gets no retry: one failure drops the shard (a new acquire
 *   gets a new fence);
 * - at most one expiry timer per wanted shard; all are cleared by stop();
 * - timer callbacks never throw; hooks' exceptions are logged (a throwing or
 *   rejecting `onAcquired` drops the shard).
 *
 * `onAcquired` runs detached from the acquire round (a slow window load for one
 * shard does not delay taking others), so `onLost` for a lease may arrive while
 * its `onAcquired` is still running; compare `lease.fence` with `fenceOf()`.
 */

export interface ShardLeaseManagerOptions {
  /** Lease time-to-live in ms. Renewal runs every ttl/3, acquire attempts every min(ttl/4, 150 ms). */
  ttlMs: number;
  log: Logger;
  /**
   * Monotonic clock in ms. Backends stamp `validUntilMono` with
   * performance.now(), so a replacement must share its time base.
   * @defaultValue performance.now
   */
  clock?: () => number;
  /** Acquire attempts in flight at once. @defaultValue 16 */
  acquireConcurrency?: number;
}

export interface ShardLeaseHooks {
  /** The shard is now held under `lease.fence`: load it. A throw/rejection drops the shard. */
  onAcquired(lease: ShardLease): void | Promise<void>;
  /** The shard is no longer held (reason: see LOST_*, or the reason given to drop()). Stop firing it. */
  onLost(shard: number, reason: string): void;
  /** The lease was given back (after onLost): a peer may take the shard now. */
  onReleased?(shard: number): void;
}

/** onLost reasons. */
export const LOST_RELEASED = 'released';
export const LOST_EXTEND_FAILED = 'lease lost';
export const LOST_EXPIRED = 'lease expired before renewal';
export const LOST_HOOK_FAILED = 'onAcquired failed';
/** A fenced write found a newer fence in Postgres: another owner took the shard. */
export const LOST_STALE_FENCE = 'stale fence';
/** The claim found the lease past its validity (renewals late): it must not fire under it. */
export const LOST_VALIDITY_LAPSED = 'lease validity lapsed';
/** Every reason a held shard is dropped (not given back): the metrics start each at 0. */
export const LOST_REASONS = [LOST_EXTEND_FAILED, LOST_EXPIRED, LOST_HOOK_FAILED, LOST_STALE_FENCE, LOST_VALIDITY_LAPSED] as const;

const TIMEOUT: unique symbol = Symbol('timeout');
const ACQUIRE_RETRY_MAX_MS = 150;
/** Past the holder's reported PTTL: the store expires a key once its clock is beyond the deadline, and timers may fire a little early. */
const EXPIRY_SLACK_MS = 3;
/** Extends started per turn of the event loop in a renewal round (renewAll). */
const RENEW_CHUNK = 8;

export class ShardLeaseManager {
  /** Lease TTL in ms (the cluster member derives its liveness cadence from it). */
  readonly ttlMs: number;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly concurrency: number;

  private desired = new Set<number>();
  private readonly held = new Map<number, ShardLease>();
  private readonly acquiring = new Set<number>();
  private readonly extending = new Set<number>();
  /** Wanted shards held by someone else: null while asking the backend, then the one attempt armed for when that lease runs out. */
  private readonly expiryTimers = new Map<number, NodeJS.Timeout | null>();
  /** Backend calls and hooks in flight, awaited (bounded) by stop(). */
  private readonly pending = new Set<Promise<unknown>>();

  private running = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private acquireTimer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  private rerun = false;
  /** A renewal round is still starting its extends (one turn of RENEW_CHUNK at a time). */
  private renewing = false;

  constructor(
    private readonly backend: LeaseBackend,
    opts: ShardLeaseManagerOptions,
    private readonly hooks: ShardLeaseHooks,
  ) {
    if (!Number.isFinite(opts.ttlMs) || opts.ttlMs < 30) {
      throw new Error(`shard leases: ttlMs must be a number of milliseconds ≥ 30 (got ${opts.ttlMs})`);
    }
    const concurrency = opts.acquireConcurrency ?? 16;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new Error(`shard leases: acquireConcurrency must be a positive integer (got ${concurrency})`);
    }
    this.ttlMs = Math.ceil(opts.ttlMs);
    this.log = opts.log;
    this.clock = opts.clock ?? (() => performance.now());
    this.concurrency = concurrency;
  }

  /** Sets the shards to own. Held shards not in it are released and reported via onLost(shard, 'released'). */
  setDesired(shards: Iterable<number>): void {
    this.desired = new Set(shards);
    for (const [shard, lease] of [...this.held]) {
      if (!this.desired.has(shard)) this.leave(shard, lease, LOST_RELEASED);
    }
    if (this.running) void this.acquireNow();
  }

  isOwned(shard: number): boolean {
    return this.held.has(shard);
  }

  /** Held and provably valid now (monotonic clock). Refuse to fire when false. */
  isValid(shard: number): boolean {
    const lease = this.held.get(shard);
    return lease !== undefined && this.clock() < lease.validUntilMono;
  }

  fenceOf(shard: number): number | undefined {
    return this.held.get(shard)?.fence;
  }

  /** Live lease objects of held shards (their validUntilMono moves on each extend). */
  owned(): ShardLease[] {
    return [...this.held.values()];
  }

  /** Every desired shard is held (and at least one is desired). */
  holdsAllDesired(): boolean {
    if (this.desired.size === 0) return false;
    for (const s of this.desired) if (!this.held.has(s)) return false;
    return true;
  }

  ownedShards(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** Drops a held shard (e.g. the claim path saw a stale fence): onLost(shard, reason), release best-effort. Still desired: re-acquired later under a new fence. */
  drop(shard: number, reason: string): void {
    const lease = this.held.get(shard);
    if (lease !== undefined) this.leave(shard, lease, reason);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.renewTimer = setInterval(() => this.renewAll(), Math.max(1, Math.floor(this.ttlMs / 3)));
    this.scheduleAcquireTick();
    void this.acquireNow();
  }

  /** Stops both loops, releases every held lease (SIGTERM path) and waits (bounded) for calls in flight. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.renewTimer);
    clearTimeout(this.acquireTimer);
    this.renewTimer = this.acquireTimer = undefined;
    for (const t of this.expiryTimers.values()) if (t) clearTimeout(t);
    this.expiryTimers.clear();
    // Release first (fast handoff); acquisitions still in flight give their lease back on arrival.
    for (const [shard, lease] of [...this.held]) this.leave(shard, lease, LOST_RELEASED);
    if (this.round) await withDeadline(this.round, this.ttlMs);
    await withDeadline(Promise.allSettled([...this.pending]), this.ttlMs);
  }

  /**
   * Tries the desired-but-not-held shards now. Resolves when this attempt (and
   * any requested meanwhile) is done; `onAcquired` hooks may still be running.
   */
  acquireNow(): Promise<void> {
    if (!this.running) return Promise.resolve();
    this.rerun = true;
    this.round ??= this.runRounds().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private async runRounds(): Promise<void> {
    while (this.rerun && this.running) {
      this.rerun = false;
      const candidates = [...this.desired].filter((s) => !this.held.has(s) && !this.acquiring.has(s));
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < candidates.length && this.running) await this.tryAcquire(candidates[next++]);
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, candidates.length) }, worker));
    }
  }

  private scheduleAcquireTick(): void {
    if (!this.running) return;
    // Wanted shards are retried often (at most every 150 ms): after a crash the
    // takeover gap is the dead owner's remaining lease plus this period.
    const delay = Math.min(this.ttlMs / 4, ACQUIRE_RETRY_MAX_MS) * (0.8 + Math.random() * 0.4);
    this.acquireTimer = setTimeout(() => {
      void this.acquireNow();
      this.scheduleAcquireTick();
    }, delay);
  }

  private async tryAcquire(shard: number): Promise<void> {
    if (!this.desired.has(shard) || this.held.has(shard) || this.acquiring.has(shard)) return; // changed mid-round
    this.acquiring.add(shard);
    try {
      const op = this.trackPending(this.backend.acquire(shard, this.ttlMs));
      const lease = await withDeadline(op, this.ttlMs);
      if (lease === TIMEOUT) {
        this.log.warn({ shard }, 'shard lease: acquire timed out');
        void op.then((late) => late && this.releaseQuietly(late), () => undefined);
        return;
      }
      if (lease === null) {
        this.armAtExpiry(shard);
        return;
      }
      if (!this.running || !this.desired.has(shard) || this.held.has(shard) || this.clock() >= lease.validUntilMono) {
        this.releaseQuietly(lease);
        return;
      }
      this.held.set(shard, lease);
      this.log.debug({ shard, fence: lease.fence, backend: this.backend.kind }, 'shard lease: acquired');
      this.runOnAcquired(lease);
    } catch (err) {
      this.log.error({ err, shard }, 'shard lease: acquire threw (backend bug)');
    } finally {
      this.acquiring.delete(shard);
    }
  }

  /**
   * Refused: someone holds the shard. If the backend says for how long, try
   * again right after that (a live holder extends meanwhile, so that attempt
   * is refused too and re-arms; a dead one's lease is gone and we take it).
   */
  private armAtExpiry(shard: number): void {
    const heldFor = this.backend.heldForMs;
    if (heldFor === undefined || this.expiryTimers.has(shard) || !this.running) return;
    this.expiryTimers.set(shard, null); // asking: one question in flight per shard
    void withDeadline(this.trackPending(heldFor.call(this.backend, shard)), this.ttlMs)
      .then((ms) => {
        if (this.expiryTimers.get(shard) !== null) return; // stopped meanwhile
        this.expiryTimers.delete(shard);
        if (ms === TIMEOUT || ms === null || !this.running || !this.desired.has(shard) || this.held.has(shard)) return;
        // A PTTL above our TTL comes from a member configured differently: the tick covers it.
        if (ms > this.ttlMs) return;
        const timer = setTimeout(() => {
          if (this.expiryTimers.get(shard) === timer) this.expiryTimers.delete(shard);
          if (this.running && this.desired.has(shard) && !this.held.has(shard)) void this.tryAcquire(shard);
        }, ms + EXPIRY_SLACK_MS);
        this.expiryTimers.set(shard, timer);
      })
      .catch((err: unknown) => {
        if (this.expiryTimers.get(shard) === null) this.expiryTimers.delete(shard);
        this.log.error({ err, shard }, 'shard lease: heldForMs threw (backend bug)');
      });
  }

  private runOnAcquired(lease: ShardLease): void {
    const fail = (err: unknown): void => {
      this.log.error({ err, shard: lease.shard, fence: lease.fence }, 'shard lease: onAcquired failed; dropping the shard');
      if (this.held.get(lease.shard) === lease) this.leave(lease.shard, lease, LOST_HOOK_FAILED);
    };
    try {
      const result = this.hooks.onAcquired(lease);
      if (result instanceof Promise) this.trackPending(result.then(undefined, fail));
    } catch (err) {
      fail(err);
    }
  }

  /**
   * One renewal round: drop what already expired, extend the rest in parallel,
   * RENEW_CHUNK shards per turn of the event loop. An extend costs the backend
   * ~0.1 ms of synchronous work (redlock builds a Lock, ioredis a command), so
   * 64 shards in one turn held due runs' timers for 5-10 ms every ttl/3.
   */
  private renewAll(): void {
    if (this.renewing) return; // the last round is still starting its extends
    this.renewing = true;
    const round = [...this.held];
    let next = 0;
    const turn = (): void => {
      if (!this.running) next = round.length; // stopped: stop() released every lease
      try {
        const now = this.clock();
        for (const end = Math.min(next + RENEW_CHUNK, round.length); next < end; next++) {
          const [shard, lease] = round[next];
          if (this.held.get(shard) !== lease || this.extending.has(shard)) continue; // gone meanwhile, or its deadline timer decides
          if (now >= lease.validUntilMono) {
            this.leave(shard, lease, LOST_EXPIRED);
            continue;
          }
          void this.extendOne(shard, lease, lease.validUntilMono - now);
        }
      } catch (err) {
        this.log.error({ err }, 'shard lease: renewal round failed');
        next = round.length;
      }
      if (next < round.length) setImmediate(turn);
      else this.renewing = false;
    };
    turn();
  }

  private async extendOne(shard: number, lease: ShardLease, remainingMs: number): Promise<void> {
    this.extending.add(shard);
    try {
      const ok = await withDeadline(this.trackPending(this.backend.extend(lease, this.ttlMs)), remainingMs);
      if (this.held.get(shard) !== lease) return; // dropped or released meanwhile
      if (ok === true && this.clock() < lease.validUntilMono) return;
      // false: the store refused; TIMEOUT or a success that came back too late: validity ran out first.
      this.leave(shard, lease, ok === false ? LOST_EXTEND_FAILED : LOST_EXPIRED);
    } catch (err) {
      this.log.error({ err, shard }, 'shard lease: extend threw (backend bug)');
      if (this.held.get(shard) === lease) this.leave(shard, lease, LOST_EXTEND_FAILED);
    } finally {
      this.extending.delete(shard);
    }
  }

  /** held → lost/released: forget, tell the caller, then give the lease back. */
  private leave(shard: number, lease: ShardLease, reason: string): void {
    this.held.delete(shard);
    const log = { shard, fence: lease.fence, reason };
    if (reason === LOST_RELEASED) this.log.debug(log, 'shard lease: released');
    else this.log.warn(log, 'shard lease: lost');
    try {
      this.hooks.onLost(shard, reason);
    } catch (err) {
      this.log.error({ err, shard }, 'shard lease: onLost threw');
    }
    this.releaseQuietly(lease);
  }

  private releaseQuietly(lease: ShardLease): void {
    const op = this.trackPending(this.backend.release(lease));
    op.then(() => this.hooks.onReleased?.(lease.shard)).catch((err: unknown) => this.log.warn({ err, shard: lease.shard }, 'shard lease: release threw'));
  }

  private trackPending<T>(op: Promise<T>): Promise<T> {
    this.pending.add(op);
    const done = (): void => {
      this.pending.delete(op);
    };
    op.then(done, done);
    return op;
  }
}

/** Resolves with `op`'s value, or TIMEOUT after `ms` (the timer is cleared when `op` settles first). */
function withDeadline<T>(op: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(TIMEOUT), Math.max(0, ms));
    op.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
