/**
 * The firing half of a daemon, composed in-process for integration tests from
 * the very component production runs: a FireEngine (loader → heap → claim →
 * release gate → delivery hub → answers, with production's claim-ahead
 * default), owning shards through a ShardLeaseManager over a real Postgres or
 * Redis lease backend, with a SchedulingService that routes its own shards'
 * runs to the engine. In place of gRPC worker streams, one in-process sink on
 * the hub records every run handed out (all queues, unlimited credit).
 * No listener: tests drive notifications themselves when they need them.
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
import type { FastLane } from '../../daemon/fast/fast-lane.js';
import { systemClock } from '../../daemon/fast/clock.js';
import type { WindowLoader } from '../../daemon/slow/loader.js';
import type { Claimer } from '../../daemon/dispatch/claimer.js';
import type { ShardFences } from '../../daemon/coord/fence.js';
import { ALL_QUEUES } from '../../daemon/dispatch/delivery-hub.js';
import { FireEngine } from '../../daemon/engine/fire-engine.js';
import { LocalPermits } from '../../daemon/dispatch/queue-limits.js';
import { DEFAULT_CLAIM_AHEAD_MS } from '../../daemon/config.js';
import { SchedulingService, type ScheduleInput } from '../../daemon/scheduling/scheduling-service.js';
import { RecurringService } from '../../daemon/recurring/recurring-service.js';
import type { Recurrence } from '../../daemon/recurring/recurrence.js';
import type { LeaseBackend } from '../../daemon/coord/lease.js';
import { PostgresLeaseBackend } from '../../daemon/coord/pg-lease.js';
import { RedisLeaseBackend } from '../../daemon/coord/redis-lease.js';
import { ShardLeaseManager } from '../../daemon/coord/shard-leases.js';
import { track, untrack } from './tracked.js';

export interface Delivery {
  run: FiredRunRow;
  /** Local wall clock when the hub handed the run out. */
  atWallMs: number;
}

export interface PartsOptions {
  db: Db;
  /** The window pool (loader, reaper, miss checks) when it must differ from `db` (a test holding its answers). @defaultValue db */
  windowDb?: Db;
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
  /** @defaultValue production's default (DEFAULT_CLAIM_AHEAD_MS) */
  claimAheadMs?: number;
  /** Credit of the recording sink (it never answers): past it, runs park in the hub. @defaultValue unlimited */
  recorderCredit?: number;
  /** @defaultValue 600,000 (no pass in a test's time unless kicked) */
  reapIntervalMs?: number;
}

export interface LostEvent {
  shard: number;
  reason: string;
}

/** A daemon's firing path, in-process. Call `own()` to take shards, `stop()` at the end. */
export class DaemonParts {
  readonly metrics = new Metrics();
  readonly engine: FireEngine;
  readonly fastLane: FastLane;
  readonly loader: WindowLoader;
  readonly claimer: Claimer;
  readonly leases: ShardLeaseManager;
  readonly backend: LeaseBackend;
  readonly scheduling: SchedulingService;
  readonly recurring: RecurringService;
  readonly deliveries: Delivery[] = [];
  readonly lost: LostEvent[] = [];
  private stopped = false;

  constructor(readonly opts: PartsOptions) {
    const memberId = opts.memberId ?? `member-${randomUUID().slice(0, 8)}`;
    const windowMs = opts.windowMs ?? 5_000;
    this.backend = opts.redis
      ? new RedisLeaseBackend({ redis: opts.redis.client, leaseDb: opts.db, prefix: opts.redis.prefix, memberId, log: silentLogger })
      : new PostgresLeaseBackend({ leaseDb: opts.db, memberId, log: silentLogger });
    const late: { engine?: FireEngine } = {};
    this.leases = new ShardLeaseManager(
      this.backend,
      { ttlMs: opts.leaseTtlMs ?? 3_000, log: silentLogger },
      {
        onAcquired: (lease) => late.engine?.addShard(lease.shard, opts.leaseTtlMs ?? 3_000),
        onLost: (shard, reason) => {
          this.lost.push({ shard, reason });
          late.engine?.removeShard(shard);
        },
      },
    );
    const engine = (late.engine = this.engine = new FireEngine({
      pools: { claim: opts.db, answer: opts.db, complete: opts.db, window: opts.windowDb ?? opts.db },
      fences: this.leases,
      clock: systemClock,
      metrics: this.metrics,
      log: silentLogger,
      schema: opts.schema ?? 'timelane',
      windowMs,
      maxInWindow: opts.maxInWindow ?? 1_000_000,
      loadIntervalMs: opts.loadIntervalMs ?? 200,
      repairIntervalMs: opts.repairIntervalMs ?? 600_000,
      reapIntervalMs: opts.reapIntervalMs ?? 600_000,
      claimAheadMs: opts.claimAheadMs ?? DEFAULT_CLAIM_AHEAD_MS,
      listen: null,
      permits: new LocalPermits(),
    }));
    this.fastLane = engine.lane;
    this.loader = engine.loader;
    this.claimer = engine.claimer;
    engine.hub.register({
      id: 0,
      workerId: 'recorder',
      queues: new Set([ALL_QUEUES]),
      credit: opts.recorderCredit ?? Number.POSITIVE_INFINITY,
      send: (run, sentAtMs) => this.deliveries.push({ run, atWallMs: sentAtMs }),
    });
    this.scheduling = new SchedulingService({
      db: opts.db,
      schema: opts.schema ?? 'timelane',
      shardCount: opts.shardCount,
      router: engine.router,
    });
    this.recurring = new RecurringService({
      db: opts.db,
      shardCount: opts.shardCount,
      router: engine.router,
      wallNow: () => Date.now(),
      forgetRun: (runId) => engine.forget(runId),
    });
    track(this, `daemon parts ${memberId}`);
    engine.start();
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
    await this.engine.drain();
    await this.leases.stop();
    await this.engine.stop();
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
/** An interval recurrence every `ms` (no phase, jitter, bounds or limit; allow_all; fire_all catch-up over 5 min, 100 runs), with `over` applied. */
export function intervalRecurrence(ms: number, over: Partial<Recurrence> = {}): Recurrence {
  return {
    cadence: { kind: 'interval', everyMs: ms, phaseMs: 0 },
    startAtMs: null,
    endAtMs: null,
    jitterMs: 0,
    limit: null,
    overlap: 'allow_all',
    catchUp: { windowMs: 300_000, mode: 'fire_all', maxRuns: 100 },
    pauseOnFailure: false,
    ...over,
  };
}

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
    recurrence: null,
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
  /** The runs' W3C trace context (migrations/0009). */
  traceparent?: string;
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
    o.traceparent ?? null,
    null,
  ]);
  const runIds = rows[0].run_ids.split(',');
  const out = ids.map((job_id, k): InsertedRun => ({ id: Number(runIds[k]), job_id, shard, priority, due_at_ms: dueAtMs[k] }));
  return out.sort((a, b) => a.due_at_ms - b.due_at_ms || a.id - b.id);
}

/** Runs CLAIM_RUNS directly: what a claimer holding `fence` on `shard` would get. */
export async function claimDirect(db: Db, ids: readonly number[], shard: number, fence: number, atWallMs = Date.now()): Promise<FiredRunRow[]> {
  const { rows } = await db.query<FiredRunRow>(CLAIM_RUNS, [[...ids], [shard], [fence], Math.floor(atWallMs), 0, '{}']);
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
  claimed_at_ms: number | null;
  lag_ms: number | null;
  lease_expires_at_ms: number | null;
}

export async function runStates(db: Db, ids: readonly number[]): Promise<Map<number, RunState>> {
  const { rows } = await db.query<RunState>(
    `SELECT id, status, fence, deliveries, (extract(epoch FROM due_at) * 1000)::int8 AS due_at_ms,
       (extract(epoch FROM fired_at) * 1000)::int8 AS fired_at_ms, (extract(epoch FROM claimed_at) * 1000)::int8 AS claimed_at_ms, lag_ms,
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
  owned(): { shard: number; fence: number }[] {
    return [...this.fences].map(([shard, fence]) => ({ shard, fence }));
  }
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
