/**
 * The firing half of a daemon, composed in-process from the real modules for
 * integration tests: FastLane (system clock) → Claimer (fenced claim) →
 * a recording `deliver`, fed by the WindowLoader, owning shards through a
 * ShardLeaseManager over a real Postgres or Redis lease backend, with a
 * SchedulingService that offers its own shards' runs to the loader.
 * No gRPC, no worker streams, no listener, no reaper: tests drive those
 * pieces themselves when they need them.
 *
 * Also: small SQL helpers that put rows straight into Postgres (bypassing
 * every offer and notification), and a polling `waitFor`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Db } from '../../daemon/db/pool.js';
import { INSERT_JOBS } from '../../daemon/db/queries/jobs.js';
import { packBytes, plainArray, textArray } from '../../daemon/scheduling/pg-arrays.js';
import { CLAIM_RUNS } from '../../daemon/db/queries/dispatch.js';
import type { DeliveryMode, FiredRunRow } from '../../daemon/db/queries/columns.js';
import { silentLogger } from '../../daemon/log.js';
import { Metrics } from '../../daemon/metrics.js';
import { FastLane } from '../../daemon/fast/fast-lane.js';
import { systemClock } from '../../daemon/fast/clock.js';
import { WindowLoader } from '../../daemon/slow/loader.js';
import { Claimer, type ShardFences } from '../../daemon/dispatch/claimer.js';
import { SchedulingService, type ScheduleInput } from '../../daemon/scheduling/scheduling-service.js';
import type { LeaseBackend } from '../../daemon/coord/lease.js';
import { PostgresLeaseBackend } from '../../daemon/coord/pg-lease.js';
import { RedisLeaseBackend } from '../../daemon/coord/redis-lease.js';
import { ShardLeaseManager } from '../../daemon/coord/shard-leases.js';
import { track, untrack } from './tracked.js';

export interface Delivery {
  run: FiredRunRow;
  /** Local wall clock when `deliver` was called. */
  atWallMs: number;
}

export interface PartsOptions {
  db: Db;
  schema?: string;
  shardCount: number;
  memberId?: string;
  /** Lease store: Postgres (default) or Redis with a key prefix. */
  redis?: { client: Redis; prefix: string };
  leaseTtlMs?: number;
  windowMs?: number;
  maxInWindow?: number;
  loadIntervalMs?: number;
  repairIntervalMs?: number;
}

export interface LostEvent {
  shard: number;
  reason: string;
}

/** A daemon's firing path, in-process. Call `own()` to take shards, `stop()` at the end. */
export class DaemonParts {
  readonly metrics = new Metrics();
  readonly fastLane: FastLane;
  readonly loader: WindowLoader;
  readonly claimer: Claimer;
  readonly leases: ShardLeaseManager;
  readonly backend: LeaseBackend;
  readonly scheduling: SchedulingService;
  readonly deliveries: Delivery[] = [];
  readonly lost: LostEvent[] = [];
  private stopped = false;

  constructor(readonly opts: PartsOptions) {
    const memberId = opts.memberId ?? `member-${randomUUID().slice(0, 8)}`;
    const windowMs = opts.windowMs ?? 5_000;
    this.fastLane = new FastLane({ clock: systemClock, onFire: (entries, firedAt) => this.claimer.fire(entries, firedAt) });
    this.loader = new WindowLoader(opts.db, this.fastLane, systemClock, silentLogger, {
      windowMs,
      maxInWindow: opts.maxInWindow ?? 1_000_000,
      loadIntervalMs: opts.loadIntervalMs ?? 200,
      repairIntervalMs: opts.repairIntervalMs ?? 600_000,
    });
    this.backend = opts.redis
      ? new RedisLeaseBackend({ redis: opts.redis.client, leaseDb: opts.db, prefix: opts.redis.prefix, memberId, log: silentLogger })
      : new PostgresLeaseBackend({ leaseDb: opts.db, memberId, log: silentLogger });
    this.leases = new ShardLeaseManager(
      this.backend,
      { ttlMs: opts.leaseTtlMs ?? 3_000, log: silentLogger },
      {
        onAcquired: (lease) => this.loader.addShard(lease.shard),
        onLost: (shard, reason) => {
          this.lost.push({ shard, reason });
          this.loader.removeShard(shard);
        },
      },
    );
    this.claimer = new Claimer({
      db: opts.db,
      readDb: opts.db,
      fences: this.leases,
      deliver: (run) => this.deliveries.push({ run, atWallMs: Date.now() }),
      reoffer: (run) => this.loader.offer(run),
      metrics: this.metrics,
      log: silentLogger,
      wallNow: () => systemClock.wallNow(),
    });
    this.scheduling = new SchedulingService({
      db: opts.db,
      schema: opts.schema ?? 'timelane',
      shardCount: opts.shardCount,
      windowMs,
      wallNow: () => systemClock.wallNow(),
      ownsShard: (s) => this.leases.isOwned(s),
      offerLocal: (run) => this.loader.offer(run),
    });
    track(this, `daemon parts ${memberId}`);
    this.fastLane.start();
    this.loader.start();
  }

  /** Takes the shards and resolves once each is held and loaded once. */
  async own(shards: number[], timeoutMs = 10_000): Promise<void> {
    this.leases.setDesired(shards);
    this.leases.start();
    await waitFor(() => shards.every((s) => this.leases.isOwned(s) && this.loader.isLoaded(s)), timeoutMs, `shards ${shards} held and loaded`);
  }

  /** How many times each run id was delivered. */
  deliveryCounts(): Map<number, number> {
    const counts = new Map<number, number>();
    for (const d of this.deliveries) counts.set(d.run.id, (counts.get(d.run.id) ?? 0) + 1);
    return counts;
  }

  delivered(runId: number): Delivery[] {
    return this.deliveries.filter((d) => d.run.id === runId);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.fastLane.stop();
    await this.leases.stop();
    await this.loader.stop();
    await waitFor(() => this.claimer.claimsInFlight === 0, 5_000, 'claims in flight to finish');
    await this.backend.close();
    untrack(this);
  }
}

/** Polls `cond` every 5 ms; throws after `timeoutMs`. Resolves with the time waited. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now();
  while (!(await cond())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
  return performance.now() - start;
}

/** A schedule request with sane defaults. */
export function scheduleInput(dueAtMs: number, over: Partial<ScheduleInput> = {}): ScheduleInput {
  return {
    namespace: 'default',
    queue: 'q',
    payload: Buffer.from('p'),
    dueAtMs,
    priority: 0,
    dedupeKey: null,
    delivery: 'at_least_once',
    maxAttempts: 3,
    initialBackoffMs: 100,
    maxBackoffMs: 1_000,
    leaseMs: 30_000,
    ...over,
  };
}

export interface InsertedRun {
  id: number;
  job_id: string;
  shard: number;
  priority: number;
  due_at_ms: number;
}

export interface InsertOptions {
  namespace?: string;
  queue?: string;
  delivery?: DeliveryMode;
  maxAttempts?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  leaseMs?: number;
  priority?: number;
}

/**
 * Inserts one-shot jobs with their first run on a chosen shard, straight into
 * Postgres with INSERT_JOBS: no offer, no notification (a "missed" run).
 */
export async function insertRuns(db: Db, shard: number, dueAtMs: readonly number[], o: InsertOptions = {}): Promise<InsertedRun[]> {
  const n = dueAtMs.length;
  if (n === 0) return [];
  const ids = Array.from({ length: n }, () => randomUUID());
  const packed = packBytes(ids.map(() => Buffer.from('payload')));
  const priority = o.priority ?? 0;
  const { rows } = await db.query<{ run_ids: string }>(INSERT_JOBS, [
    plainArray(ids),
    textArray([o.namespace ?? 'default']),
    textArray([o.queue ?? 'q']),
    plainArray(ids.map(() => shard)),
    packed.bytes,
    packed.offsets,
    packed.lengths,
    plainArray([priority]),
    '{}',
    textArray([o.delivery ?? 'at_least_once']),
    plainArray([o.maxAttempts ?? 3]),
    plainArray([o.initialBackoffMs ?? 100]),
    plainArray([o.maxBackoffMs ?? 1_000]),
    plainArray([o.leaseMs ?? 30_000]),
    plainArray(dueAtMs),
  ]);
  const runIds = rows[0].run_ids.split(',');
  const out = ids.map((job_id, k): InsertedRun => ({ id: Number(runIds[k]), job_id, shard, priority, due_at_ms: dueAtMs[k] }));
  return out.sort((a, b) => a.due_at_ms - b.due_at_ms || a.id - b.id);
}

/** Runs CLAIM_RUNS directly: what a claimer holding `fence` on `shard` would get. */
export async function claimDirect(db: Db, ids: readonly number[], shard: number, fence: number, atWallMs = Date.now()): Promise<FiredRunRow[]> {
  const { rows } = await db.query<FiredRunRow>(CLAIM_RUNS, [[...ids], [shard], [fence], Math.floor(atWallMs), 0]);
  return rows;
}

/** The recorded fence of a shard. */
export async function fenceOf(db: Db, shard: number): Promise<number> {
  const { rows } = await db.query<{ fence: number }>('SELECT fence FROM shards WHERE shard = $1', [shard]);
  return rows[0].fence;
}

export interface RunState {
  id: number;
  status: string;
  fence: number;
  deliveries: number;
  due_at_ms: number;
  fired_at_ms: number | null;
  lag_ms: number | null;
  lease_expires_at_ms: number | null;
}

export async function runStates(db: Db, ids: readonly number[]): Promise<Map<number, RunState>> {
  const { rows } = await db.query<RunState>(
    `SELECT id, status, fence, deliveries, (extract(epoch FROM due_at) * 1000)::int8 AS due_at_ms,
       (extract(epoch FROM fired_at) * 1000)::int8 AS fired_at_ms, lag_ms,
       (extract(epoch FROM lease_expires_at) * 1000)::int8 AS lease_expires_at_ms
     FROM runs WHERE id = ANY($1::int8[])`,
    [[...ids]],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** A ShardFences whose opinion the test sets; records every drop. */
export class FixedFences implements ShardFences {
  readonly drops: LostEvent[] = [];
  constructor(readonly fences: Map<number, number>) {}
  fenceOf(shard: number): number | undefined {
    return this.fences.get(shard);
  }
  isValid(shard: number): boolean {
    return this.fences.has(shard);
  }
  drop(shard: number, reason: string): void {
    this.fences.delete(shard);
    this.drops.push({ shard, reason });
  }
}

export function shuffle<T>(items: readonly T[], seed = 1): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9;
    s >>>= 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
