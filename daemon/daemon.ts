/**
 * One timelane daemon: wires the slow lane (Postgres, loader, notifications),
 * the coordination (shard leases + fences), the fast lane (heap + timer), the
 * dispatch (claim, delivery, redelivery) and the gRPC API.
 *
 * Life cycle: start() → checks the schema, opens the gRPC port (NOT_SERVING),
 * starts leases (each acquired shard is loaded from Postgres), then SERVING.
 * stop() (SIGTERM) → NOT_SERVING, stops firing, releases every shard so a
 * peer takes over at once, drains the server, closes connections.
 */
import type http from 'node:http';
import os from 'node:os';
import { Redis } from 'ioredis';
import type { DaemonConfig } from './config.js';
import { parseShardRanges } from './config.js';
import { createPool, clientConfig, query, type Db } from './db/pool.js';
import { checkSchema, migrate } from './db/migrate.js';
import { createLogger, type Logger } from './log.js';
import { Metrics, serveMetrics } from './metrics.js';
import { FastLane } from './fast/fast-lane.js';
import { systemClock, type Clock } from './fast/clock.js';
import { WindowLoader } from './slow/loader.js';
import { NearDueListener, publishNearDue, type NearDueRun } from './slow/notifications.js';
import { LOST_RELEASED, ShardLeaseManager } from './coord/shard-leases.js';
import { RedisLeaseBackend } from './coord/redis-lease.js';
import { PostgresLeaseBackend } from './coord/pg-lease.js';
import type { LeaseBackend } from './coord/lease.js';
import { DeliveryHub } from './dispatch/delivery-hub.js';
import { Claimer, MAX_CLAIMS_IN_FLIGHT } from './dispatch/claimer.js';
import { RedeliveryReaper } from './dispatch/redelivery.js';
import { ReleaseGate } from './dispatch/release-gate.js';
import { CompleteBatcher } from './dispatch/complete-batcher.js';
import { SchedulingService } from './scheduling/scheduling-service.js';
import { startGrpcServer, type GrpcServer } from './grpc/server.js';
import type { ApiContext } from './grpc/context.js';
import { EXPIRE_DELIVERIES } from './db/queries/dispatch.js';
import { heartbeatRun } from './dispatch/answers.js';
import { LIST_SHARDS, type ShardRow } from './db/queries/admin.js';
import { measureClockSkew } from './clock-skew.js';
import type { ShardInfo } from '../proto/gen/timelane/v1/ShardInfo.js';
import type { Member } from '../proto/gen/timelane/v1/Member.js';
import { ClusterMember } from './cluster/cluster-member.js';
import { TimelaneError } from './errors.js';
import { ClusterOperations } from './cluster/operations.js';
import { assignShards } from './cluster/assignment.js';

const SKEW_EVERY_MS = 5_000;
const ANSWER_POOL_SIZE = 4;
const LEASE_POOL_SIZE = 3;

export class Daemon {
  readonly log: Logger;
  readonly metrics = new Metrics();
  private readonly clock: Clock = systemClock;
  private db!: Db;
  private claimDb!: Db;
  private answerDb!: Db;
  private leaseDb!: Db;
  private redis: Redis | null = null;
  private backend!: LeaseBackend;
  private shardCount = 0;
  private startedAtMs = 0;

  fastLane!: FastLane;
  private releaseGate!: ReleaseGate;
  loader!: WindowLoader;
  leases!: ShardLeaseManager;
  hub!: DeliveryHub;
  private claimer!: Claimer;
  private reaper!: RedeliveryReaper;
  private listener!: NearDueListener;
  private scheduling!: SchedulingService;
  private grpc: GrpcServer | null = null;
  private metricsServer: http.Server | null = null;
  private skewTimer: NodeJS.Timeout | null = null;
  private gaugeTimer: NodeJS.Timeout | null = null;
  /** Set when Redis is configured: membership and balanced assignment. */
  cluster: ClusterMember | null = null;

  constructor(readonly config: DaemonConfig) {
    this.log = createLogger(config.logLevel, { member: config.memberId });
  }

  /** The bound gRPC port (useful with port 0). */
  get grpcPort(): number {
    return this.grpc?.port ?? 0;
  }

  async start(): Promise<void> {
    const cfg = this.config;
    this.startedAtMs = Date.now();
    const dbOpts = { url: cfg.databaseUrl, schema: cfg.databaseSchema, poolSize: cfg.databasePoolSize };
    if (cfg.migrateOnStart) await migrate(dbOpts, cfg.shardCount);
    this.db = createPool(dbOpts);
    // Claims get connections of their own, so a fire never queues behind ingest or answers.
    this.claimDb = createPool({ ...dbOpts, poolSize: MAX_CLAIMS_IN_FLIGHT + 1 });
    // Worker answers (batched Completes) get their own few connections too.
    this.answerDb = createPool({ ...dbOpts, poolSize: ANSWER_POOL_SIZE });
    // Leases (and fences) get a pool no API query uses: renewals never queue behind client traffic.
    this.leaseDb = createPool({ ...dbOpts, poolSize: LEASE_POOL_SIZE });
    ({ shardCount: this.shardCount } = await checkSchema(this.db, cfg.databaseSchema));

    this.backend = this.createBackend();
    // A run that waited for worker credit gets its lease restarted as it is handed out.
    this.hub = new DeliveryHub(undefined, (run) =>
      heartbeatRun(this.answerDb, { runId: run.id, fence: run.fence, deliveries: run.deliveries }, null, null).catch((err: unknown) => {
        if (err instanceof TimelaneError && err.kind === 'failed_precondition') return null; // superseded meanwhile
        throw err;
      }),
    );
    this.releaseGate = new ReleaseGate(
      this.clock,
      (run) => {
        this.metrics.fireLag.observe(Math.max(0, this.clock.wallNow() - run.due_at_ms));
        this.hub.deliver(run);
      },
      (err, run) => this.log.error({ err, runId: run.id }, 'could not deliver a released run'),
    );
    this.fastLane = new FastLane({
      clock: this.clock,
      // Claims go out between claimAheadMs and claimAheadMs/2 before due, in
      // buckets: runs due within half the lead share one statement.
      leadMs: cfg.claimAheadMs / 2,
      gatherMs: cfg.claimAheadMs / 2,
      // With a lead, precision is the release gate's job: this lane need not spin.
      earlyMs: cfg.claimAheadMs > 0 ? 0 : undefined,
      onFire: (entries, firedAt) => this.claimer.fire(entries, firedAt),
      onClockStep: (delta) => {
        this.metrics.clockSteps.inc();
        this.log.warn({ deltaMs: delta }, 'wall clock stepped; heap re-based');
      },
    });
    this.loader = new WindowLoader(this.db, this.fastLane, this.clock, this.log, {
      windowMs: cfg.windowMs,
      maxInWindow: cfg.maxInWindow,
      loadIntervalMs: cfg.loadIntervalMs,
      repairIntervalMs: cfg.repairIntervalMs,
    });
    this.leases = new ShardLeaseManager(
      this.backend,
      { ttlMs: cfg.leaseTtlMs, log: this.log },
      {
        onAcquired: (lease) => {
          this.log.info({ shard: lease.shard, fence: lease.fence }, 'shard acquired');
          this.loader.addShard(lease.shard);
          this.loader.requestRepairAfter(cfg.leaseTtlMs);
        },
        onLost: (shard, reason) => {
          if (reason === LOST_RELEASED) this.log.info({ shard }, 'shard released');
          else {
            this.log.warn({ shard, reason }, 'shard dropped');
            this.metrics.shardsLost.inc({ reason });
          }
          // Runs already claimed under our fence (parked for worker credit) are still
          // delivered: the new owner sees them as fired and will not fire them again.
          this.loader.removeShard(shard);
        },
        onReleased: (shard) => this.cluster?.announceRelease(shard),
      },
    );
    this.claimer = new Claimer({
      db: this.claimDb,
      readDb: this.db,
      fences: this.leases,
      deliver: (run) => this.releaseGate.admit(run),
      reoffer: (run) => this.loader.offer(run),
      metrics: this.metrics,
      log: this.log,
      wallNow: () => this.clock.wallNow(),
      claimAheadMs: cfg.claimAheadMs,
    });
    this.reaper = new RedeliveryReaper(
      this.db,
      () => {
        const owned = this.leases.owned();
        return { shards: owned.map((l) => l.shard), fences: owned.map((l) => l.fence) };
      },
      (run) => this.hub.deliver(run),
      this.metrics,
      this.log,
      cfg.reapIntervalMs,
    );
    this.scheduling = new SchedulingService({
      db: this.db,
      schema: cfg.databaseSchema,
      shardCount: this.shardCount,
      windowMs: cfg.windowMs,
      wallNow: () => this.clock.wallNow(),
      ownsShard: (s) => this.leases.isOwned(s),
      offerLocal: (run) => this.loader.offer(run),
    });
    this.listener = new NearDueListener({
      clientConfig: clientConfig(dbOpts),
      schema: cfg.databaseSchema,
      log: this.log,
      onRuns: (runs) => runs.forEach((r) => this.loader.offer(r)),
      onReconnect: () => this.loader.requestRepair(),
    });

    this.grpc = await startGrpcServer(this.apiContext(), cfg.grpcAddress);
    if (cfg.metricsAddress) this.metricsServer = await serveMetrics(this.metrics, cfg.metricsAddress);

    this.releaseGate.start();
    this.fastLane.start();
    this.loader.start();
    this.listener.start();
    this.reaper.start();
    this.leases.start();
    if (this.redis) {
      await waitReady(this.redis, 2_000); // first membership round on a live connection, if Redis is up
      this.cluster = new ClusterMember(
        {
          redis: this.redis,
          prefix: cfg.redisPrefix,
          memberId: cfg.memberId,
          address: this.advertisedAddress(),
          pinned: this.pinnedShards(),
          pinnedRanges: cfg.shards,
          adoptOrphans: cfg.adoptOrphans,
          standby: cfg.standby,
          shardCount: this.shardCount,
          intervalMs: cfg.membershipIntervalMs,
          log: this.log,
        },
        this.leases,
      );
      await this.cluster.start();
    } else {
      // Single node (Postgres leases): own the pinned range, or every shard.
      this.leases.setDesired(cfg.shards ? this.pinnedShards() : Array.from({ length: this.shardCount }, (_, i) => i));
    }
    this.skewTimer = setInterval(() => void this.measureSkew(), SKEW_EVERY_MS);
    void this.measureSkew();
    this.gaugeTimer = setInterval(() => this.updateGauges(), 1000);
    this.grpc.setServing(true);
    this.log.info(
      { grpc: `${cfg.grpcAddress.replace(/:\d+$/, '')}:${this.grpc.port}`, metrics: cfg.metricsAddress || null, shards: this.shardCount, leases: this.backend.kind },
      'timelane daemon started',
    );
  }

  /** Graceful stop: release shards first so peers take over at once. */
  async stop(): Promise<void> {
    this.grpc?.setServing(false);
    if (this.skewTimer) clearInterval(this.skewTimer);
    if (this.gaugeTimer) clearInterval(this.gaugeTimer);
    await this.cluster?.leave();
    // Stop firing, then let what was already claimed reach the workers: those
    // runs are `fired` in Postgres, and at-most-once ones would never come back.
    this.fastLane?.stop();
    await this.claimer?.drain(2_000);
    await this.releaseGate?.drain(this.config.claimAheadMs + 100);
    this.releaseGate?.stop();
    await this.leases?.stop();
    await this.cluster?.close();
    await this.loader?.stop();
    await this.reaper?.stop();
    await this.listener?.stop();
    await this.grpc?.stop(2_000);
    if (this.metricsServer) await new Promise<void>((r) => this.metricsServer?.close(() => r()));
    await this.backend?.close();
    this.redis?.disconnect();
    await Promise.all([this.db, this.claimDb, this.answerDb, this.leaseDb].map((p) => p?.end().catch(() => undefined)));
    this.log.info('timelane daemon stopped');
  }

  private createBackend(): LeaseBackend {
    const cfg = this.config;
    if (!cfg.redisUrl) return new PostgresLeaseBackend({ leaseDb: this.leaseDb, memberId: cfg.memberId, log: this.log });
    // Fail fast while Redis is away: a lease we cannot prove must not wait in a queue.
    this.redis = new Redis(cfg.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2_000,
      commandTimeout: Math.max(200, Math.floor(cfg.leaseTtlMs / 3)),
    });
    this.redis.on('error', (err) => this.log.debug({ err: String(err) }, 'redis connection error'));
    return new RedisLeaseBackend({ redis: this.redis, leaseDb: this.leaseDb, prefix: cfg.redisPrefix, memberId: cfg.memberId, log: this.log });
  }

  private pinnedShards(): number[] {
    return this.config.shards ? parseShardRanges(this.config.shards, this.shardCount) : [];
  }

  /** What peers and clients dial: the advertise address, else the listen address (a wildcard host becomes our hostname). */
  private advertisedAddress(): string {
    const addr = this.config.advertiseAddress.replace(/:0$/, `:${this.grpcPort}`);
    return addr.replace(/^(0\.0\.0\.0|\[::\]|::):/, `${os.hostname()}:`);
  }

  private async measureSkew(): Promise<void> {
    try {
      const { skewMs } = await measureClockSkew(this.db);
      this.metrics.clockSkew.set(skewMs);
    } catch {
      /* Postgres away: the gauge keeps its last value */
    }
  }

  private updateGauges(): void {
    this.metrics.runsInWindow.set(this.fastLane.size);
    this.metrics.ownedShards.set(this.leases.ownedShards().length);
    this.metrics.readyBacklog.set(this.hub.backlog);
  }

  /** Routes a committed run: to our loader if we own its shard, else to the owner by NOTIFY. */
  private async routeRun(run: NearDueRun): Promise<void> {
    if (this.leases.isOwned(run.shard)) this.loader.offer(run);
    else if (run.dueAtMs <= this.clock.wallNow() + this.config.windowMs) await publishNearDue(this.db, this.config.databaseSchema, [run]);
  }

  private apiContext(): ApiContext {
    return {
      ops: () => (this.cluster ? new ClusterOperations(this.db, this.cluster, this.shardCount) : null),
      db: this.db,
      answerDb: this.answerDb,
      completions: new CompleteBatcher(this.answerDb),
      log: this.log,
      metrics: this.metrics,
      limits: { maxPayloadBytes: this.config.maxPayloadBytes, defaultLeaseMs: this.config.defaultRunLeaseMs },
      wallNow: () => this.clock.wallNow(),
      scheduling: this.scheduling,
      hub: this.hub,
      forgetRun: (runId) => void this.fastLane.cancel(runId),
      routeRun: (run) => this.routeRun(run),
      expireDeliveries: async (refs) => {
        await query(this.answerDb, EXPIRE_DELIVERIES, [refs.map((r) => r.runId), refs.map((r) => r.fence), refs.map((r) => r.deliveries)]);
        this.reaper.kick();
      },
      listShards: () => this.listShards(),
      listMembers: async (): Promise<Member[]> => this.listMembers(),
    };
  }

  private listMembers(): Member[] {
    if (!this.cluster) {
      return [
        {
          id: this.config.memberId,
          grpcAddress: this.advertisedAddress(),
          ownedShards: this.leases.ownedShards().length,
          startedAtMs: String(this.startedAtMs),
          lastSeenMs: String(Date.now()),
        },
      ];
    }
    return this.cluster.members.map((m) => ({
      id: m.id,
      grpcAddress: m.address,
      ownedShards: m.id === this.config.memberId ? this.leases.ownedShards().length : m.ownedShards,
      startedAtMs: String(m.startedAtMs),
      lastSeenMs: String(m.lastSeenMs),
    }));
  }

  private async listShards(): Promise<ShardInfo[]> {
    const { rows } = await query<ShardRow>(this.db, LIST_SHARDS);
    const view = this.cluster?.view;
    const assigned = view ? assignShards(view) : [];
    const now = Date.now();
    return rows.map((r) => {
      const here = this.leases.isOwned(r.shard);
      return {
        leaseAgeMs: String(r.owner && r.acquired_at_ms ? Math.max(0, now - r.acquired_at_ms) : 0),
        lagMs: r.next_due_at_ms && r.next_due_at_ms < now ? now - r.next_due_at_ms : 0,
        assignedTo: assigned[r.shard] ?? (this.cluster ? '' : this.config.memberId),
        shard: r.shard,
        owner: r.owner ?? '',
        fence: String(r.fence),
        runsInWindow: here ? this.fastLane.sizeOfShard(r.shard) : 0,
        nextDueAtMs: String(r.next_due_at_ms ?? 0),
        acquiredAtMs: String(r.acquired_at_ms ?? 0),
        ownedHere: here,
      };
    });
  }
}

/** Resolves when the client is ready or after `ms` (Redis down: the daemon starts anyway and keeps trying). */
function waitReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      redis.off('ready', done);
      resolve();
    }
    redis.once('ready', done);
  });
}
