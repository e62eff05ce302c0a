import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
// redlock 5.0.0-beta.2 ships its types at dist/index.d.ts but its `exports` map
// has no "types" condition, so NodeNext resolution cannot see them from a bare
// 'redlock' import. Types come from the file by path (erased at build); the
// runtime comes from the CJS build, so ExecutionError/Lock/Redlock share one copy.
import type * as RedlockModule from '../../node_modules/redlock/dist/index.js';
import { query, type Db } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { LeaseBackend, ShardLease } from './lease.js';
import { RECORD_FENCE, RELEASE_SHARD, SELECT_FENCE, type FenceRow } from './fence-queries.js';

const { default: Redlock, ExecutionError, ResourceLockedError } = createRequire(import.meta.url)('redlock') as typeof RedlockModule;
type Redlock = RedlockModule.default;
type Lock = RedlockModule.Lock;

/**
 * Redis lease backend (production): a redlock lease per shard plus a fencing
 * token from a Redis counter, recorded forward-only in Postgres.
 *
 * Owns: one Redlock instance (retryCount 0: acquire fails fast when the shard
 * is held, extend never retries) and the current redlock `Lock` of every shard
 * this member holds (redlock replaces the Lock object on every extend). The
 * Redis client and the pool (`leaseDb`) belong to the caller.
 *
 * Keys: `${prefix}lease:${shard}` (redlock, PX ttl) and `${prefix}fence:${shard}`
 * (INCR counter, no expiry).
 *
 * States per shard: free → locked (redlock acquired) → recorded (token written
 * to Postgres: the lease is returned) → extended* → released | lost.
 *
 * Invariants:
 * - a lease is returned only after its token is recorded in Postgres by a
 *   statement that moves the fence strictly forward (I-1);
 * - I-2 "Redis may forget": if the counter is not above Postgres's fence (Redis
 *   restarted empty, or a stale counter), it is re-seeded past Postgres's value
 *   in one Lua script ("set if greater, then INCR") and recording is retried a
 *   bounded number of times; a counter reset never locks owners out;
 * - a lease whose local validity (monotonic clock) ran out while it was being
 *   taken is given back instead of returned;
 * - no method throws: an unreachable Redis or Postgres means "no lease";
 * - the fence statements run on `leaseDb`, a pool no API query uses: taking or
 *   giving back a shard never queues behind client traffic.
 *
 * The Redis client should fail fast rather than queue commands while
 * disconnected (e.g. `maxRetriesPerRequest: 1`, `commandTimeout` below the
 * renewal period); the lease manager also bounds every call by the lease's
 * validity.
 */

/** Share of the TTL we trust locally, measured from before the Redis call. */
const VALIDITY_FACTOR = 0.9;
/** Attempts to record a token in Postgres (the first plus re-seeded retries). */
const MAX_RECORD_ATTEMPTS = 3;

/** KEYS[1] fence counter; ARGV[1] Postgres's fence. Raises the counter to ARGV[1] if below, then INCRs. */
const SEED_AND_INCR = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('INCR', KEYS[1])`;

export interface RedisLeaseOptions {
  /** ioredis client used for leases and fence counters (not closed by the backend). */
  redis: Redis;
  /**
   * Pool for the fence statements only (record, read and clear a shard's
   * fence in `shards`) — small and never shared with API queries, so taking a
   * shard cannot wait behind client traffic. Not closed by the backend.
   */
  leaseDb: Db;
  /** Key prefix, e.g. "timelane:". */
  prefix: string;
  /** This daemon's member id, written to `shards.owner`. */
  memberId: string;
  log?: Logger;
}

interface HeldLock {
  readonly fence: number;
  lock: Lock;
}

export class RedisLeaseBackend implements LeaseBackend {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;
  private readonly leaseDb: Db;
  private readonly prefix: string;
  private readonly memberId: string;
  private readonly log: Logger | undefined;
  private readonly redlock: Redlock;
  /** Current redlock Lock per held shard, tagged with the fence it was taken under. */
  private readonly locks = new Map<number, HeldLock>();
  private closed = false;

  constructor(opts: RedisLeaseOptions) {
    this.redis = opts.redis;
    this.leaseDb = opts.leaseDb;
    this.prefix = opts.prefix;
    this.memberId = opts.memberId;
    this.log = opts.log;
    this.redlock = new Redlock([opts.redis], { retryCount: 0, retryDelay: 0, retryJitter: 0 });
    // redlock emits every per-client failure (including "already locked") as
    // 'error'; an unhandled 'error' event would crash the process.
    this.redlock.on('error', (err: unknown) => {
      if (!(err instanceof ResourceLockedError)) this.log?.debug({ err }, 'redis lease: redlock client error');
    });
  }

  leaseKey(shard: number): string {
    return `${this.prefix}lease:${shard}`;
  }

  fenceKey(shard: number): string {
    return `${this.prefix}fence:${shard}`;
  }

  async acquire(shard: number, ttlMs: number): Promise<ShardLease | null> {
    if (this.closed) return null;
    const ttl = Math.ceil(ttlMs);
    const start = performance.now();
    const validUntilMono = start + ttl * VALIDITY_FACTOR;
    let lock: Lock;
    try {
      lock = await this.redlock.acquire([this.leaseKey(shard)], ttl);
    } catch (err) {
      const reason = await failureReason(err);
      if (reason !== 'held') this.log?.warn({ err, shard, reason }, 'redis lease: acquire failed');
      return null;
    }
    let fence: number | null = null;
    try {
      fence = await this.issueAndRecord(shard, validUntilMono);
    } catch (err) {
      this.log?.warn({ err, shard }, 'redis lease: issuing or recording the fence failed');
    }
    if (fence === null || this.closed || performance.now() >= validUntilMono) {
      if (fence !== null) this.log?.warn({ shard, fence }, 'redis lease: lease expired while being taken; giving it back');
      await this.giveBack(shard, fence, lock);
      return null;
    }
    this.locks.set(shard, { fence, lock });
    return { shard, fence, validUntilMono };
  }

  async extend(lease: ShardLease, ttlMs: number): Promise<boolean> {
    const held = this.locks.get(lease.shard);
    if (held === undefined || held.fence !== lease.fence) return false;
    const start = performance.now();
    try {
      const next = await this.redlock.extend(held.lock, Math.ceil(ttlMs));
      if (this.locks.get(lease.shard) !== held) return false; // released meanwhile
      held.lock = next;
      lease.validUntilMono = start + Math.ceil(ttlMs) * VALIDITY_FACTOR;
      return true;
    } catch (err) {
      this.log?.info({ shard: lease.shard, fence: lease.fence, reason: await failureReason(err) }, 'redis lease: extend failed');
      return false;
    }
  }

  async release(lease: ShardLease): Promise<void> {
    lease.validUntilMono = 0;
    const held = this.locks.get(lease.shard);
    if (held !== undefined && held.fence === lease.fence) {
      this.locks.delete(lease.shard);
      await this.giveBack(lease.shard, lease.fence, held.lock);
    } else {
      await this.clearOwner(lease.shard, lease.fence);
    }
  }

  /** PTTL of the shard's lease key: when a refused acquire can succeed (nobody renews a dead holder's lease). */
  async heldForMs(shard: number): Promise<number | null> {
    if (this.closed) return null;
    try {
      const ms = await this.redis.pttl(this.leaseKey(shard));
      if (ms === -2) return 0; // no key: free now
      return ms >= 0 ? ms : null; // -1 (no expiry) is not a redlock key: don't guess
    } catch {
      return null;
    }
  }

  /** Forgets held locks (they expire by TTL); the Redis client and `leaseDb` belong to the caller. */
  async close(): Promise<void> {
    this.closed = true;
    this.locks.clear();
  }

  /**
   * INCRs the counter and records the token forward-only; when Postgres is
   * already at or past it, re-seeds the counter past Postgres (I-2) and retries.
   * Null when no token could be recorded (or the lease ran out meanwhile).
   */
  private async issueAndRecord(shard: number, validUntilMono: number): Promise<number | null> {
    let token = await this.redis.incr(this.fenceKey(shard));
    for (let attempt = 1; ; attempt++) {
      const recorded = await query<FenceRow>(this.leaseDb, RECORD_FENCE, [shard, token, this.memberId]);
      if (recorded.rows.length > 0) return recorded.rows[0].fence;
      if (attempt >= MAX_RECORD_ATTEMPTS || performance.now() >= validUntilMono) {
        this.log?.warn({ shard, token, attempt }, 'redis lease: could not record a fresh fence');
        return null;
      }
      const current = await query<FenceRow>(this.leaseDb, SELECT_FENCE, [shard]);
      if (current.rows.length === 0) {
        this.log?.warn({ shard }, 'redis lease: no such shard in Postgres');
        return null;
      }
      const pgFence = current.rows[0].fence;
      this.log?.warn({ shard, token, pgFence }, 'redis lease: fence counter is not above Postgres (Redis restarted empty?); re-seeding');
      const seeded = Number(await this.redis.eval(SEED_AND_INCR, 1, this.fenceKey(shard), String(pgFence)));
      if (!Number.isSafeInteger(seeded)) throw new Error(`redis lease: fence counter for shard ${shard} is not an integer`);
      token = seeded;
    }
  }

  /** Releases the redlock lock and, if a fence was recorded, marks the shard free in Postgres. */
  private async giveBack(shard: number, fence: number | null, lock: Lock): Promise<void> {
    await Promise.all([
      this.redlock.release(lock, { retryCount: 0 }).then(
        () => undefined,
        async (err: unknown) => this.log?.debug({ shard, reason: await failureReason(err) }, 'redis lease: release found no lock (expired or taken)'),
      ),
      fence === null ? undefined : this.clearOwner(shard, fence),
    ]);
  }

  private async clearOwner(shard: number, fence: number): Promise<void> {
    try {
      await query(this.leaseDb, RELEASE_SHARD, [shard, fence]);
    } catch (err) {
      this.log?.warn({ err, shard }, 'redis lease: clearing the owner in Postgres failed');
    }
  }
}

/**
 * Why a redlock operation failed: 'held' when every vote against was a lock
 * held by someone else (or gone, for extend/release), else the first client error.
 */
async function failureReason(err: unknown): Promise<string> {
  if (!(err instanceof ExecutionError)) return err instanceof Error ? err.message : String(err);
  if (err.attempts.length === 0) return err.message; // e.g. "Cannot extend an already-expired lock."
  const stats = await err.attempts[err.attempts.length - 1];
  for (const e of stats.votesAgainst.values()) {
    if (!(e instanceof ResourceLockedError)) return e.message;
  }
  return 'held';
}
