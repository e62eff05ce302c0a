/**
 * One timelane daemon: wiring and life cycle only. The parts:
 *
 *   pools        api (clients) · lease · claim · answer · window — separate, so
 *                leases, claims and answers never queue behind API traffic
 *   leases       ShardLeaseManager over Redis (cluster) or Postgres (single node)
 *   engine       FireEngine: loader → heap → claim → release → delivery → answers
 *   cluster      membership and balanced assignment (Redis only)
 *   api          gRPC (Scheduler, Worker, Admin, health, reflection) + metrics
 *   console      the web console (console/server), when --console-address is
 *                set: a client of our own gRPC API, listening from just after
 *                the gRPC port opens (its pages show NOT_SERVING's state too)
 *   tracing      OpenTelemetry spans of each run's life, when an OTLP endpoint
 *                is configured (tracing/run-tracing.ts); null otherwise
 *
 * Life cycle: start() → checks the schema, opens the gRPC port (NOT_SERVING),
 * starts the engine and the leases (each acquired shard is loaded from
 * Postgres), then SERVING. stop() (SIGTERM) → NOT_SERVING, leaves the
 * cluster, drains the engine (claimed runs still reach workers), releases
 * every shard so a peer takes over at once, drains the server, closes.
 */
import type http from 'node:http';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { DaemonConfig } from './config.js';
import { parseShardRanges } from './config.js';
import { createPool, clientConfig, type Db } from './db/pool.js';
import { SilenceWatch } from './db/silence-watch.js';
import { checkSchema, migrate } from './db/migrate.js';
import { createLogger, type Logger } from './log.js';
import { unavailable } from './errors.js';
import { Metrics, serveMetrics } from './metrics.js';
import { systemClock, type Clock } from './fast/clock.js';
import { LOST_RELEASED, ShardLeaseManager } from './coord/shard-leases.js';
import { RedisLeaseBackend } from './coord/redis-lease.js';
import { PostgresLeaseBackend } from './coord/pg-lease.js';
import type { LeaseBackend } from './coord/lease.js';
import { connectRedis, waitReady } from './coord/redis-client.js';
import { MAX_CLAIMS_IN_FLIGHT } from './dispatch/claimer.js';
import { FireEngine } from './engine/fire-engine.js';
import { SchedulingService } from './scheduling/scheduling-service.js';
import { PostgresPermits, RedisPermits } from './dispatch/queue-limits.js';
import { RecurringService } from './recurring/recurring-service.js';
import { WorkflowService } from './workflows/workflow-service.js';
import { ScheduledStarts } from './workflows/scheduled-starts.js';
import { startGrpcServer, type GrpcServer } from './grpc/server.js';
import { listenerSecurity, type ListenerSecurity } from './security/listener-security.js';
import { isSelfSigned, readTlsFiles, watchHttpsContext } from './security/tls.js';
import { NamespaceQuotas } from './scheduling/quotas.js';
import type { ApiContext } from './grpc/context.js';
import { measureClockSkew } from './clock-skew.js';
import { ClusterMember } from './cluster/cluster-member.js';
import { ClusterOperations } from './cluster/operations.js';
import { listMembers, listShards, type ClusterViewDeps } from './admin/cluster-view.js';
import { startConsole, type ConsoleServer } from '../console/server/console-server.js';
import { consoleClientCredentials, consoleClientIdentity } from '../console/server/grpc-credentials.js';
import { startTracing } from './tracing/start-tracing.js';
import type { RunTracing } from './tracing/run-tracing.js';

const SKEW_EVERY_MS = 5_000;
const ANSWER_POOL_SIZE = 4;
/**
 * An answer's statement waits at most this long for a lock (its worker sends it again). The daemon's own
 * hold a run's or job's row for milliseconds, a materialiser batch for a few hundred: a wait past this
 * is a transaction that does not end.
 */
const ANSWER_LOCK_TIMEOUT_MS = 1_000;
/** COMPLETE_RUNS only: one batch is written at a time (complete-batcher.ts), and one connection is spare. */
const COMPLETE_POOL_SIZE = 2;
const WINDOW_POOL_SIZE = 3;
const LEASE_POOL_SIZE = 3;
const READY_POLL_MS = 10;
/** SetQueueLimits waits this long for this daemon to re-read the limits (its periodic re-read follows within a second anyway). */
const LIMITS_REREAD_WAIT_MS = 2_000;

export class Daemon {
  readonly log: Logger;
  readonly metrics = new Metrics();
  private readonly clock: Clock = systemClock;
  private pools: Db[] = [];
  private silenceWatch: SilenceWatch | undefined;
  private db!: Db;
  private leaseDb!: Db;
  private redis: Redis | null = null;
  private backend!: LeaseBackend;
  private shardCount = 0;
  private startedAtMs = 0;

  engine!: FireEngine;
  leases!: ShardLeaseManager;
  private scheduling!: SchedulingService;
  private recurring!: RecurringService;
  private workflows!: WorkflowService;
  /** Recurring workflow starts: an in-process consumer of their reserved queue. */
  private scheduledStarts: ScheduledStarts | null = null;
  private grpc: GrpcServer | null = null;
  private metricsServer: http.Server | null = null;
  private consoleServer: ConsoleServer | null = null;
  private security: ListenerSecurity | null = null;
  private quotas!: NamespaceQuotas;
  private skewTimer: NodeJS.Timeout | null = null;
  /** Null unless traces are exported (then the OpenTelemetry SDK is loaded). */
  private tracing: RunTracing | null = null;
  private gaugeTimer: NodeJS.Timeout | null = null;
  /** Set when Redis is configured: membership and balanced assignment. */
  cluster: ClusterMember | null = null;

  constructor(readonly config: DaemonConfig) {
    this.log = createLogger(config.logLevel, { member: config.memberId }, config.logFormat === 'pretty' ? 'pretty' : 'json');
  }

  /** The web console's URL as bound, or null when it is off. */
  get consoleUrl(): string | null {
    return this.consoleServer?.url ?? null;
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
    // The claim's, the answers' and the leases' statements are bounded: keyed, they take
    // milliseconds, and a silent connection must not stall firing. The window pool's are not (a
    // first load or a repair scan after an outage sorts every overdue run; a materialiser pass
    // may write many occurrences), nor the API's (a large page, a backfill slice).
    const bounded = cfg.databaseStatementTimeoutMs > 0 ? cfg.databaseStatementTimeoutMs : undefined;
    const pool = (size: number, o: { keepOpen?: boolean; keyedOnly?: boolean; statementTimeoutMs?: number; lockTimeoutMs?: number } = {}): Db => {
      const p = createPool({ ...dbOpts, poolSize: size, ...o });
      this.pools.push(p);
      return p;
    };
    this.db = pool(cfg.databasePoolSize);
    this.leaseDb = pool(LEASE_POOL_SIZE, { statementTimeoutMs: bounded });
    const enginePools = {
      claim: pool(MAX_CLAIMS_IN_FLIGHT + 1, { keepOpen: true, keyedOnly: true, statementTimeoutMs: bounded }),
      // Its lock waits are bounded too: four connections, and a row held by a transaction that does not
      // end would keep one for the statement bound, and every other worker's Fail and Heartbeat behind it.
      answer: pool(ANSWER_POOL_SIZE, { keepOpen: true, statementTimeoutMs: bounded, lockTimeoutMs: ANSWER_LOCK_TIMEOUT_MS }),
      complete: pool(COMPLETE_POOL_SIZE, { keepOpen: true, keyedOnly: true, statementTimeoutMs: bounded }),
      window: pool(WINDOW_POOL_SIZE),
    };
    // The unbounded pools' connections that go silent are found by asking Postgres about their backends (db/silence-watch.ts).
    if (bounded) {
      this.silenceWatch = new SilenceWatch({ pools: { api: this.db, window: enginePools.window }, clientConfig: clientConfig(dbOpts), suspectAfterMs: bounded, log: this.log });
      this.silenceWatch.start();
    }
    ({ shardCount: this.shardCount } = await checkSchema(this.db, cfg.databaseSchema));
    this.tracing = await startTracing({ otlpTracesEndpoint: cfg.otlpTracesEndpoint, memberId: cfg.memberId, log: this.log });
    this.metrics.shardCount.set(this.shardCount);

    this.backend = this.createBackend();
    // The leases call back into the engine, built just below (and started after it).
    const late: { engine?: FireEngine } = {};
    this.leases = new ShardLeaseManager(
      this.backend,
      { ttlMs: cfg.leaseTtlMs, log: this.log },
      {
        onAcquired: (lease) => {
          this.log.info({ shard: lease.shard, fence: lease.fence }, 'shard acquired');
          late.engine?.addShard(lease.shard, cfg.leaseTtlMs);
        },
        onLost: (shard, reason) => {
          if (reason === LOST_RELEASED) this.log.info({ shard }, 'shard released');
          else {
            this.log.warn({ shard, reason }, 'shard dropped');
            this.metrics.shardsLost.inc({ reason });
          }
          late.engine?.removeShard(shard);
        },
        onReleased: (shard) => this.cluster?.announceRelease(shard),
      },
    );
    late.engine = this.engine = new FireEngine({
      pools: enginePools,
      fences: this.leases,
      clock: this.clock,
      metrics: this.metrics,
      log: this.log,
      schema: cfg.databaseSchema,
      windowMs: cfg.windowMs,
      materialiseAheadMs: cfg.materialiseAheadMs,
      maxInWindow: cfg.maxInWindow,
      loadIntervalMs: cfg.loadIntervalMs,
      repairIntervalMs: cfg.repairIntervalMs,
      reapIntervalMs: cfg.reapIntervalMs,
      claimAheadMs: cfg.claimAheadMs,
      warmUpRuns: cfg.warmUpRuns,
      listen: clientConfig(dbOpts),
      listenProbeMs: bounded,
      // Per-queue limits hold across the cluster through Redis, else through Postgres.
      permits: this.redis ? new RedisPermits(this.redis, cfg.redisPrefix) : new PostgresPermits(enginePools.window),
      tracing: this.tracing,
    });
    this.scheduling = new SchedulingService({
      db: this.db,
      schema: cfg.databaseSchema,
      shardCount: this.shardCount,
      router: this.engine.router,
    });
    this.recurring = new RecurringService({
      db: this.db,
      shardCount: this.shardCount,
      router: this.engine.router,
      wallNow: () => this.clock.wallNow(),
      forgetRun: (runId) => this.engine.forget(runId),
    });
    this.workflows = new WorkflowService({
      db: this.db,
      shardCount: this.shardCount,
      router: this.engine.router,
      forgetRun: (runId) => this.engine.forget(runId),
    });

    this.security = listenerSecurity(cfg, this.log);
    this.quotas = new NamespaceQuotas(this.db, this.log, cfg.quotasFile || null, cfg.tlsReloadMs);
    this.quotas.start();
    this.grpc = await startGrpcServer(this.apiContext(), cfg.grpcAddress, { credentials: this.security.grpcCredentials, interceptor: this.security.interceptor }, cfg.healthAddress);
    if (cfg.metricsAddress) this.metricsServer = await serveMetrics(this.metrics, cfg.metricsAddress, this.security.tls, this.log);
    if (this.security.summary.auth === 'open') this.log.warn('running OPEN: no authentication, every caller is an admin (dev mode or --insecure)');
    // Tokens without TLS: every call carries its bearer token readable on the wire.
    else if (this.security.summary.tls === 'off' && cfg.authFile)
      this.log.warn('bearer tokens travel in plaintext: anyone who can read the traffic can replay them; give --tls-cert and --tls-key');
    // Before any shard is taken: a console port already in use fails the start cleanly.
    if (cfg.consoleAddress) this.consoleServer = await this.startConsole(cfg.consoleAddress);

    await this.engine.prime();
    this.engine.start();
    this.scheduledStarts = new ScheduledStarts({ hub: this.engine.hub, answers: this.engine.answers, workflows: this.workflows, log: this.log });
    this.scheduledStarts.start();
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
    await this.becomeReady(Date.now() + cfg.leaseTtlMs);
    this.log.info(
      {
        grpc: `${cfg.grpcAddress.replace(/:\d+$/, '')}:${this.grpc.port}`,
        metrics: cfg.metricsAddress || null,
        console: this.consoleUrl,
        health: this.grpc.healthPort ? `${cfg.healthAddress.replace(/:\d+$/, '')}:${this.grpc.healthPort}` : null,
        shards: this.shardCount,
        leases: this.backend.kind,
        ...this.security.summary,
      },
      'timelane daemon started',
    );
  }

  /**
   * Readiness: SERVING once every assigned shard is held, or once a lease TTL
   * has passed (a shard still held by a dead peer is not ours until its lease
   * ends; a daemon that owns part of its share can already serve).
   */
  private async becomeReady(deadlineMs: number): Promise<void> {
    while (!this.leases.holdsAllDesired() && Date.now() < deadlineMs) await new Promise((r) => setTimeout(r, READY_POLL_MS));
    const all = this.leases.holdsAllDesired();
    if (!all) this.log.warn({ owned: this.leases.ownedShards().length }, 'serving before owning every assigned shard (waited one lease TTL)');
    this.grpc?.setServing(true);
  }

  /**
   * The console calls our own gRPC API (as the CLI would: same validation,
   * same gate — each browser request carries its user's bearer token), so it
   * dials our listen port on a loopback host when we listen on a wildcard.
   * With TLS it serves HTTPS with our certificate and verifies our gRPC port
   * against TIMELANE_TLS_CA (as the CLI does), else our own certificate file;
   * under mTLS it presents a client certificate of its own (consoleClientIdentity), never ours.
   */
  private startConsole(address: string): Promise<ConsoleServer> {
    const cfg = this.config;
    const host = cfg.grpcAddress.replace(/:\d+$/, '').replace(/^(0\.0\.0\.0|\[::\]|::)$/, '127.0.0.1');
    const tls = this.security?.tls ?? null;
    const env = process.env;
    const identity = consoleClientIdentity(env, tls?.keyFile ?? null);
    if (tls?.clientCaFile && !(identity.certFile && identity.keyFile))
      this.log.warn('web console: the gRPC port requires client certificates; give the console one with TIMELANE_CONSOLE_TLS_CERT and TIMELANE_CONSOLE_TLS_KEY');
    // Without TIMELANE_TLS_CA the console trusts the certificate file itself, which only a self-signed one can anchor.
    if (tls && !env.TIMELANE_TLS_CA && !isSelfSigned(tls.certFile))
      this.log.warn(
        { tlsCert: tls.certFile },
        'web console: --tls-cert is signed by a CA, and TIMELANE_TLS_CA is not set: the console cannot verify the gRPC port and every API call will fail (503). Set TIMELANE_TLS_CA to the CA that signed it',
      );
    return startConsole({
      address,
      grpcAddress: `${host}:${this.grpcPort}`,
      registry: this.metrics.registry,
      local: { memberId: cfg.memberId, streamsPerQueue: () => this.engine.hub.streamsPerQueue() },
      authRequired: cfg.authFile !== '',
      clientOptions: tls ? { credentials: consoleClientCredentials({ caFile: env.TIMELANE_TLS_CA || tls.certFile, ...identity }) } : {},
      https: tls ? { options: readTlsFiles({ ...tls, clientCaFile: null }), watch: (server) => watchHttpsContext(server, { ...tls, clientCaFile: null }, this.log, 'console') } : undefined,
      onError: (err, url) => this.log.error({ err, url }, 'web console request failed'),
    });
  }

  /** Graceful stop: release shards first so peers take over at once. */
  async stop(): Promise<void> {
    await this.consoleServer?.stop();
    this.grpc?.setServing(false);
    if (this.skewTimer) clearInterval(this.skewTimer);
    if (this.gaugeTimer) clearInterval(this.gaugeTimer);
    await this.cluster?.leave();
    await this.engine?.drain();
    await this.scheduledStarts?.stop();
    await this.leases?.stop();
    await this.cluster?.close();
    await this.engine?.stop();
    await this.grpc?.stop(2_000);
    if (this.metricsServer) await new Promise<void>((r) => this.metricsServer?.close(() => r()));
    this.security?.stop();
    this.quotas?.stop();
    await this.backend?.close();
    this.redis?.disconnect();
    await this.engine?.answers.settled(); // expiries of the streams grpc.stop closed
    // The watch runs until the pools are closed: a silent connection would hold their end() for good.
    await Promise.all(this.pools.map((p) => p.end().catch(() => undefined)));
    this.silenceWatch?.stop();
    await this.tracing?.shutdown(); // the last spans: those of the drain
    this.log.info('timelane daemon stopped');
  }

  /**
   * The cluster, for the Admin API; null for a single node. A clustered daemon
   * with no view of its cluster yet (starting, or Redis unreachable since it
   * started) answers UNAVAILABLE: it knows no other member, and would list
   * itself alone, assign itself every shard, and call operator moves
   * single-node only.
   */
  private joinedCluster(): ClusterMember | null {
    if (!this.config.redisUrl) return null;
    if (!this.cluster?.view) throw unavailable('this daemon has not joined its cluster yet (starting, or Redis unreachable); retry, or ask another member');
    return this.cluster;
  }

  private createBackend(): LeaseBackend {
    const cfg = this.config;
    if (!cfg.redisUrl) return new PostgresLeaseBackend({ leaseDb: this.leaseDb, memberId: cfg.memberId, log: this.log });
    this.redis = connectRedis(cfg.redisUrl, cfg.leaseTtlMs, this.log, { ca: cfg.redisTlsCa, cert: cfg.redisTlsCert, key: cfg.redisTlsKey });
    this.metrics.watchRedis();
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
      this.metrics.postgresUp.set(1);
    } catch {
      // Postgres away: the skew gauge keeps its last value.
      this.metrics.postgresUp.set(0);
    }
  }

  private updateGauges(): void {
    this.metrics.runsInWindow.set(this.engine.lane.size);
    this.metrics.ownedShards.set(this.leases.ownedShards().length);
    this.metrics.readyBacklog.set(this.engine.hub.backlog);
    this.metrics.heldBack.set(this.engine.claimer.heldBack);
    if (this.redis) this.metrics.redisUp.set(this.redis.status === 'ready' ? 1 : 0);
  }

  private apiContext(): ApiContext {
    const view: ClusterViewDeps = {
      db: this.db,
      memberId: this.config.memberId,
      address: () => this.advertisedAddress(),
      startedAtMs: this.startedAtMs,
      cluster: () => this.joinedCluster(),
      isOwned: (s) => this.leases.isOwned(s),
      ownedCount: () => this.leases.ownedShards().length,
      runsInWindow: (s) => this.engine.lane.sizeOfShard(s),
    };
    return {
      ops: () => {
        const cluster = this.joinedCluster();
        return cluster ? new ClusterOperations(this.db, cluster, this.shardCount) : null;
      },
      db: this.db,
      memberId: this.config.memberId,
      answers: this.engine.answers,
      log: this.log,
      metrics: this.metrics,
      limits: { maxPayloadBytes: this.config.maxPayloadBytes, defaultLeaseMs: this.config.defaultRunLeaseMs },
      wallNow: () => this.clock.wallNow(),
      scheduling: this.scheduling,
      quotas: this.quotas,
      stillAdmitted: (metadata) => this.security?.stillAdmitted(metadata) ?? true,
      recurring: this.recurring,
      workflows: this.workflows,
      hub: this.engine.hub,
      tracing: this.tracing,
      forgetRun: (runId) => this.engine.forget(runId),
      onStreamClosed: () => this.engine.redeliverNow(),
      // Waits at most LIMITS_REREAD_WAIT_MS: the change is committed whatever this re-read does.
      onLimitsChanged: () =>
        Promise.race([
          this.engine.queueLimits.refresh().catch((err: unknown) => this.log.warn({ err: String(err) }, 'could not re-read queue limits after a change; the periodic re-read will')),
          new Promise<void>((resolve) => setTimeout(resolve, LIMITS_REREAD_WAIT_MS).unref()),
        ]),
      listShards: () => listShards(view),
      listMembers: async () => listMembers(view),
    };
  }
}
