/**
 * Per-queue limits on delivery: at most `maxInFlight` runs of a queue handed
 * out and unanswered at once, and at most `maxPerSecond` handed out per
 * second — across every daemon of the cluster.
 *
 * A permit is taken before a run is handed to a worker stream and given back
 * when the delivery settles (answer, stream closed, cancel). A permit whose
 * run is no longer fired is given back by the sweeper (PermitSweeper) within
 * PERMIT_SWEEP_MS: a run answered through another daemon after its own died
 * is settled on no stream that held it. A queue that becomes limited takes
 * permits for the runs already in flight (DeliveryHub.adoptInFlight), so
 * they count against the new limit. Permits live in
 * Redis when the daemon has one (a sorted set of run ids per queue, scored by
 * when the permit lapses, and a counter per queue and second), or in Postgres
 * otherwise (unlogged tables, taken under a per-queue advisory lock: daemons
 * with Postgres leases and pinned shards share them). A permit lapses on its
 * own, so a daemon that dies holding permits does not hold them forever.
 *
 * The limits themselves are rows of `queue_limits`, re-read every second by
 * `QueueLimitsCache`; a queue without a row is not limited and costs nothing.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import {
  ACQUIRE_PERMIT,
  CLEAR_QUEUE_LIMITS,
  LOCK_QUEUE_PERMITS,
  LIST_QUEUE_LIMITS,
  PERMIT_HOLDERS,
  RELEASE_PERMIT,
  RELEASE_PERMITS,
  SET_QUEUE_LIMITS,
  STALE_PERMIT_HOLDERS,
  type QueueLimitsRow,
} from '../db/queries/limits.js';
import { plainArray } from '../scheduling/pg-arrays.js';
import { transaction } from '../db/pool.js';
import type { Logger } from '../log.js';

export interface QueueLimit {
  maxInFlight: number;
  maxPerSecond: number;
}

/** Why a permit was refused: the queue is full, or this second's budget is spent. */
export type Refusal = 'in_flight' | 'rate';

/**
 * A permit granted: `true`, taken by this call (the caller gives it back);
 * `'shared'`, the run held one already (another copy of it, handed out
 * elsewhere after a shard moved, or one a dead daemon left): it counts, and
 * is not this caller's to give back — the sweeper frees it once the run is
 * no longer fired. Keyed by run id, a copy giving back "its" permit freed the
 * other copy's, and the queue went over its limit.
 */
export type Grant = true | 'shared';

export interface PermitStore {
  /** Takes a permit for `runId` (held until `untilMs` at most), or says why not. */
  acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<Grant | Refusal>;
  release(queue: string, runId: number): Promise<void>;
  /** Gives back the permits of these runs, in one call. */
  releaseAll(queue: string, runIds: readonly number[]): Promise<void>;
  /** The runs holding the queue's permits. */
  holders(queue: string): Promise<number[]>;
}

/** A permit whose run is no longer fired is given back within this long. */
export const PERMIT_SWEEP_MS = 2_000;
/** Permit holders looked up in Postgres per statement. */
const SWEEP_CHUNK = 10_000;
/** A limit with no bound on in-flight runs for a permit taken whatever the count (a run already in flight). */
const UNBOUNDED: QueueLimit = { maxInFlight: 0x7fff_ffff, maxPerSecond: 0 };

/**
 * ZREMRANGEBYSCORE lapsed permits; refuse when full (unless this run holds
 * one already: 2, shared); take a rate token for this second; record the permit.
 * KEYS[1] in-flight set, KEYS[2] rate counter of this second.
 * ARGV: now ms, max in flight, max per second, run id, permit end ms.
 */
const ACQUIRE = `
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local held = false
if max > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  held = redis.call('ZSCORE', KEYS[1], ARGV[4])
  if not held and redis.call('ZCARD', KEYS[1]) >= max then return 0 end
end
if rate > 0 then
  local n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
  if n > rate then return -1 end
end
if max > 0 then redis.call('ZADD', KEYS[1], tonumber(ARGV[5]), ARGV[4]) end
if held then return 2 end
return 1`;

export class RedisPermits implements PermitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<Grant | Refusal> {
    const second = Math.floor(nowMs / 1000);
    const r = Number(
      await this.redis.eval(ACQUIRE, 2, this.inFlightKey(queue), `${this.prefix}:qlimit:${queue}:rate:${second}`, nowMs, limit.maxInFlight, limit.maxPerSecond, runId, untilMs),
    );
    return r === 1 ? true : r === 2 ? 'shared' : r === 0 ? 'in_flight' : 'rate';
  }

  async release(queue: string, runId: number): Promise<void> {
    await this.redis.zrem(this.inFlightKey(queue), String(runId));
  }

  async releaseAll(queue: string, runIds: readonly number[]): Promise<void> {
    if (runIds.length > 0) await this.redis.zrem(this.inFlightKey(queue), ...runIds.map(String));
  }

  async holders(queue: string): Promise<number[]> {
    return (await this.redis.zrange(this.inFlightKey(queue), 0, -1)).map(Number);
  }

  private inFlightKey(queue: string): string {
    return `${this.prefix}:qlimit:${queue}:inflight`;
  }
}

/** Permits in Postgres: for daemons without Redis. */
export class PostgresPermits implements PermitStore {
  constructor(private readonly db: Db) {}

  async acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<Grant | Refusal> {
    const { rows } = await transaction(this.db, async (tx) => {
      await query(tx, LOCK_QUEUE_PERMITS, [queue]);
      return query<{ v: 'ok' | 'shared' | Refusal }>(tx, ACQUIRE_PERMIT, [queue, runId, Math.floor(nowMs), Math.floor(untilMs), limit.maxInFlight, limit.maxPerSecond]);
    });
    return rows[0]?.v === 'ok' ? true : (rows[0]?.v ?? 'in_flight');
  }

  async release(queue: string, runId: number): Promise<void> {
    await query(this.db, RELEASE_PERMIT, [queue, runId]);
  }

  async releaseAll(queue: string, runIds: readonly number[]): Promise<void> {
    if (runIds.length > 0) await query(this.db, RELEASE_PERMITS, [queue, plainArray(runIds)]);
  }

  async holders(queue: string): Promise<number[]> {
    return (await query<{ run_id: number }>(this.db, PERMIT_HOLDERS, [queue])).rows.map((r) => r.run_id);
  }
}

/** Permits in this process: for an in-process engine alone on its queues (tests). */
export class LocalPermits implements PermitStore {
  private readonly inFlight = new Map<string, Map<number, number>>();
  private readonly rate = new Map<string, { second: number; n: number }>();

  acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<Grant | Refusal> {
    const held = this.inFlight.get(queue) ?? new Map<number, number>();
    this.inFlight.set(queue, held);
    let shared = false;
    if (limit.maxInFlight > 0) {
      for (const [id, until] of held) if (until <= nowMs) held.delete(id);
      shared = held.has(runId);
      if (!shared && held.size >= limit.maxInFlight) return Promise.resolve('in_flight');
    }
    if (limit.maxPerSecond > 0) {
      const second = Math.floor(nowMs / 1000);
      const r = this.rate.get(queue);
      const n = r && r.second === second ? r.n + 1 : 1;
      if (n > limit.maxPerSecond) return Promise.resolve('rate');
      this.rate.set(queue, { second, n });
    }
    if (limit.maxInFlight > 0) held.set(runId, untilMs);
    return Promise.resolve(shared ? 'shared' : true);
  }

  release(queue: string, runId: number): Promise<void> {
    this.inFlight.get(queue)?.delete(runId);
    return Promise.resolve();
  }

  releaseAll(queue: string, runIds: readonly number[]): Promise<void> {
    for (const id of runIds) this.inFlight.get(queue)?.delete(id);
    return Promise.resolve();
  }

  holders(queue: string): Promise<number[]> {
    return Promise.resolve([...(this.inFlight.get(queue)?.keys() ?? [])]);
  }
}

/** The limits of every limited queue, re-read from Postgres every `refreshMs`. */
export class QueueLimitsCache {
  private limits = new Map<string, QueueLimit>();
  private timer: NodeJS.Timeout | null = null;
  /** Re-reads started, and the latest one whose result is in `limits`. */
  private started = 0;
  private applied = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly refreshMs = 1_000,
  ) {}

  /** Called with the queues that gained a bound on runs in flight at a re-read. */
  onBounded: (queues: string[]) => void = () => undefined;

  get(queue: string): QueueLimit | undefined {
    return this.limits.get(queue);
  }

  /** Every limited queue and its limit. */
  entries(): IterableIterator<[string, QueueLimit]> {
    return this.limits.entries();
  }

  async refresh(): Promise<void> {
    // Re-reads overlap (the periodic one, one after a change): a read that started earlier never replaces a later one.
    const seq = ++this.started;
    const { rows } = await query<QueueLimitsRow>(this.db, LIST_QUEUE_LIMITS);
    if (seq < this.applied) return;
    this.applied = seq;
    const before = this.limits;
    this.limits = new Map(rows.map((r) => [r.queue, { maxInFlight: r.max_in_flight, maxPerSecond: r.max_per_second }]));
    const bounded = rows.filter((r) => r.max_in_flight > 0 && !((before.get(r.queue)?.maxInFlight ?? 0) > 0)).map((r) => r.queue);
    if (bounded.length > 0) this.onBounded(bounded);
  }

  start(): void {
    const tick = (): void => {
      this.refresh().catch((err: unknown) => this.log.warn({ err: String(err) }, 'could not read queue limits; keeping the last ones'));
    };
    tick();
    this.timer = setInterval(tick, this.refreshMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * Gives back permits whose run is no longer fired, every PERMIT_SWEEP_MS:
 * a run answered through another daemon (its own died holding the permit),
 * or ended at its lease unanswered, is settled on no stream that held its
 * permit, which otherwise lapsed only after PERMIT_MAX_MS (an hour) — a
 * queue whose permits were all held so stopped for that long. And takes
 * again the permits of this daemon's deliveries that the store lost.
 */
export class PermitSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly db: Db,
    private readonly cache: QueueLimitsCache,
    private readonly permits: PermitStore,
    private readonly log: Logger,
    /**
     * This daemon's deliveries in flight: each must hold its permit. One the
     * store lost (a Redis restarted empty) takes it again, else the queue
     * went over its limit by what was in flight.
     */
    private readonly local: { inFlightOf(queue: string): number[]; adopt(queue: string, runIds: ReadonlySet<number>): void } | null = null,
    private readonly everyMs = PERMIT_SWEEP_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .catch((err: unknown) => this.log.warn({ err: String(err) }, 'could not sweep queue permits; trying again'))
        .finally(() => (this.running = null));
    }, this.everyMs);
    this.timer.unref();
  }

  /** Stops sweeping; resolves once a pass under way is over (before the pools close). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every queue with a bound on runs in flight; returns how many permits it gave back. */
  async sweep(): Promise<number> {
    let freed = 0;
    for (const [queue, limit] of [...this.cache.entries()]) {
      if (limit.maxInFlight <= 0) continue;
      const holders = await this.permits.holders(queue);
      if (this.local) {
        const held = new Set(holders);
        const lost = this.local.inFlightOf(queue).filter((id) => !held.has(id));
        if (lost.length > 0) {
          // Not a run no longer fired (a copy here superseded, then answered elsewhere): the next pass would give it back.
          const { rows } = await query<{ id: number }>(this.db, STALE_PERMIT_HOLDERS, [plainArray(lost.slice(0, SWEEP_CHUNK))]);
          const stale = new Set(rows.map((r) => r.id));
          const adopt = new Set(lost.slice(0, SWEEP_CHUNK).filter((id) => !stale.has(id)));
          if (adopt.size > 0) this.local.adopt(queue, adopt);
        }
      }
      for (let i = 0; i < holders.length; i += SWEEP_CHUNK) {
        const { rows } = await query<{ id: number }>(this.db, STALE_PERMIT_HOLDERS, [plainArray(holders.slice(i, i + SWEEP_CHUNK))]);
        await this.permits.releaseAll(queue, rows.map((r) => r.id));
        freed += rows.length;
      }
    }
    return freed;
  }
}

export async function listQueueLimits(db: Db): Promise<QueueLimitsRow[]> {
  return (await query<QueueLimitsRow>(db, LIST_QUEUE_LIMITS)).rows;
}

/** Sets a queue's limits; both 0 removes them. */
export async function setQueueLimits(db: Db, queue: string, maxInFlight: number, maxPerSecond: number): Promise<QueueLimit> {
  if (maxInFlight === 0 && maxPerSecond === 0) await query(db, CLEAR_QUEUE_LIMITS, [queue]);
  else await query(db, SET_QUEUE_LIMITS, [queue, maxInFlight, maxPerSecond]);
  return { maxInFlight, maxPerSecond };
}

/** The hub's gate over a cache of limits and a permit store. */
export function deliveryGate(cache: QueueLimitsCache, permits: PermitStore, log: Logger) {
  return {
    limitOf: (queue: string): QueueLimit | undefined => cache.get(queue),
    acquire: (queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number) => permits.acquire(queue, runId, limit, nowMs, untilMs),
    /** A permit for a run already in flight, whatever the count: it counts against the limit from now on. True: taken by this call (the caller's to give back). */
    adopt: async (queue: string, runId: number, nowMs: number, untilMs: number): Promise<boolean> => (await permits.acquire(queue, runId, UNBOUNDED, nowMs, untilMs)) === true,
    release: (queue: string, runId: number): void => {
      // A permit that cannot be given back lapses on its own (PERMIT_MAX_MS); say so.
      permits.release(queue, runId).catch((err: unknown) => log.warn({ err: String(err), queue, runId }, 'could not give a queue permit back'));
    },
  };
}
