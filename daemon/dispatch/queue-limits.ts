/**
 * Per-queue limits on delivery: at most `maxInFlight` runs of a queue handed
 * out and unanswered at once, and at most `maxPerSecond` handed out per
 * second — across every daemon of the cluster.
 *
 * A permit is taken before a run is handed to a worker stream and given back
 * when the delivery settles (answer, stream closed, cancel). Permits live in
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
import { ACQUIRE_PERMIT, CLEAR_QUEUE_LIMITS, LOCK_QUEUE_PERMITS, LIST_QUEUE_LIMITS, RELEASE_PERMIT, SET_QUEUE_LIMITS, type QueueLimitsRow } from '../db/queries/limits.js';
import { transaction } from '../db/pool.js';
import type { Logger } from '../log.js';

export interface QueueLimit {
  maxInFlight: number;
  maxPerSecond: number;
}

/** Why a permit was refused: the queue is full, or this second's budget is spent. */
export type Refusal = 'in_flight' | 'rate';

export interface PermitStore {
  /** Takes a permit for `runId` (held until `untilMs` at most), or says why not. */
  acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<true | Refusal>;
  release(queue: string, runId: number): Promise<void>;
}

/**
 * ZREMRANGEBYSCORE lapsed permits; refuse when full (unless this run holds
 * one already); take a rate token for this second; record the permit.
 * KEYS[1] in-flight set, KEYS[2] rate counter of this second.
 * ARGV: now ms, max in flight, max per second, run id, permit end ms.
 */
const ACQUIRE = `
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
if max > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= max then return 0 end
end
if rate > 0 then
  local n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], 2000) end
  if n > rate then return -1 end
end
if max > 0 then redis.call('ZADD', KEYS[1], tonumber(ARGV[5]), ARGV[4]) end
return 1`;

export class RedisPermits implements PermitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<true | Refusal> {
    const second = Math.floor(nowMs / 1000);
    const r = Number(
      await this.redis.eval(ACQUIRE, 2, this.inFlightKey(queue), `${this.prefix}:qlimit:${queue}:rate:${second}`, nowMs, limit.maxInFlight, limit.maxPerSecond, runId, untilMs),
    );
    return r === 1 ? true : r === 0 ? 'in_flight' : 'rate';
  }

  async release(queue: string, runId: number): Promise<void> {
    await this.redis.zrem(this.inFlightKey(queue), String(runId));
  }

  private inFlightKey(queue: string): string {
    return `${this.prefix}:qlimit:${queue}:inflight`;
  }
}

/** Permits in Postgres: for daemons without Redis. */
export class PostgresPermits implements PermitStore {
  constructor(private readonly db: Db) {}

  async acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<true | Refusal> {
    const { rows } = await transaction(this.db, async (tx) => {
      await query(tx, LOCK_QUEUE_PERMITS, [queue]);
      return query<{ v: 'ok' | Refusal }>(tx, ACQUIRE_PERMIT, [queue, runId, Math.floor(nowMs), Math.floor(untilMs), limit.maxInFlight, limit.maxPerSecond]);
    });
    return rows[0]?.v === 'ok' ? true : (rows[0]?.v ?? 'in_flight');
  }

  async release(queue: string, runId: number): Promise<void> {
    await query(this.db, RELEASE_PERMIT, [queue, runId]);
  }
}

/** Permits in this process: for an in-process engine alone on its queues (tests). */
export class LocalPermits implements PermitStore {
  private readonly inFlight = new Map<string, Map<number, number>>();
  private readonly rate = new Map<string, { second: number; n: number }>();

  acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<true | Refusal> {
    const held = this.inFlight.get(queue) ?? new Map<number, number>();
    this.inFlight.set(queue, held);
    if (limit.maxInFlight > 0) {
      for (const [id, until] of held) if (until <= nowMs) held.delete(id);
      if (!held.has(runId) && held.size >= limit.maxInFlight) return Promise.resolve('in_flight');
    }
    if (limit.maxPerSecond > 0) {
      const second = Math.floor(nowMs / 1000);
      const r = this.rate.get(queue);
      const n = r && r.second === second ? r.n + 1 : 1;
      if (n > limit.maxPerSecond) return Promise.resolve('rate');
      this.rate.set(queue, { second, n });
    }
    if (limit.maxInFlight > 0) held.set(runId, untilMs);
    return Promise.resolve(true);
  }

  release(queue: string, runId: number): Promise<void> {
    this.inFlight.get(queue)?.delete(runId);
    return Promise.resolve();
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

  get(queue: string): QueueLimit | undefined {
    return this.limits.get(queue);
  }

  async refresh(): Promise<void> {
    // Re-reads overlap (the periodic one, one after a change): a read that started earlier never replaces a later one.
    const seq = ++this.started;
    const { rows } = await query<QueueLimitsRow>(this.db, LIST_QUEUE_LIMITS);
    if (seq < this.applied) return;
    this.applied = seq;
    this.limits = new Map(rows.map((r) => [r.queue, { maxInFlight: r.max_in_flight, maxPerSecond: r.max_per_second }]));
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
    release: (queue: string, runId: number): void => {
      // A permit that cannot be given back lapses on its own (PERMIT_MAX_MS); say so.
      permits.release(queue, runId).catch((err: unknown) => log.warn({ err: String(err), queue, runId }, 'could not give a queue permit back'));
    },
  };
}
