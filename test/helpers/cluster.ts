/**
 * A test cluster for fault tests: N timelane daemons (child processes, member
 * ids a, b, c … by default) on one test database and one Redis under a unique
 * key prefix, with short leases, plus one worker session per daemon that
 * records every delivery tagged with the daemon it came from.
 *
 * Load: `scheduleSpread(n, fromMs, overMs, opts)` schedules n one-shot runs
 * due evenly over [fromMs, fromMs + overMs) through ScheduleBatch (≤ 1000 per
 * call, spread over the live daemons). Accounting: `counts()` compares what
 * was scheduled with what the workers received (fired, lost, duplicates, by
 * delivery mode). Shard ownership is read from Postgres (`timelane.shards`)
 * and from the daemons' 'shard acquired' / 'shard dropped' log lines.
 *
 * Everything started here is tracked (test/helpers/tracked.ts) and stopped
 * by `stopAll()`: workers, clients, daemons, the Redis prefix, and the
 * database when the cluster created it.
 */
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWorker, type DeliveredRunInfo, type DeliveryModeName, type ScheduleInput, TimelaneClient, type Worker } from '@timelane/client';
import type { DaemonLogLine, DaemonProcess } from '../../ops/local/daemon-process.js';
import { createPool } from '../../daemon/db/pool.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from './redis.js';
import { chunks, startDaemon, waitUntil } from './e2e.js';
import { track, untrack } from './tracked.js';

export { sleep };

// ------------------------------------------------------------ records ---

/** One delivery as a worker saw it. */
export interface Delivery {
  runId: string;
  jobId: string;
  idempotencyKey: string;
  /** Delivery number (1 for the first hand-out). */
  delivery: number;
  fence: number;
  mode: DeliveryModeName;
  dueAtMs: number;
  /** When the daemon released it to the worker: its hand-off, or a staged run's due time (DeliveredRunInfo.firedAtMs). */
  firedAtMs: number;
  /** When the message that brought it reached the worker (this process's wall clock). */
  arrivedAtMs: number;
  /** The test process's Date.now() when the handler started. */
  receivedAt: number;
  /** Member id of the daemon whose stream delivered it. */
  member: string;
  address: string;
}

/** A run this test scheduled. */
export interface ScheduledRun {
  runId: string;
  jobId: string;
  shard: number;
  dueAtMs: number;
  mode: DeliveryModeName;
}

export interface Counts {
  scheduled: number;
  /** Scheduled runs received at least once. */
  fired: number;
  /** Scheduled runs never received. */
  lost: number;
  /** Receipts beyond the first, over all scheduled runs. */
  duplicates: number;
  duplicatesAtMostOnce: number;
  duplicatesAtLeastOnce: number;
  lostIds: string[];
  duplicateIds: string[];
  /** Deliveries of runs this test did not schedule. */
  unknown: number;
}

export class DeliveryRecorder {
  readonly deliveries: Delivery[] = [];
  readonly byRun = new Map<string, Delivery[]>();
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];

  record(d: Delivery): void {
    this.deliveries.push(d);
    const list = this.byRun.get(d.runId);
    if (list) list.push(d);
    else this.byRun.set(d.runId, [d]);
    for (const w of [...this.waiters]) {
      if (w.check()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  /** Resolves true once `cond` holds, false after `timeoutMs`. */
  waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
    if (cond()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = {
        check: cond,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }
}

// ------------------------------------------------------------ cluster ---

export interface ClusterOptions {
  /** Member ids. @defaultValue ['a', 'b', 'c'] */
  members?: string[];
  /** Shards of a database the cluster creates. @defaultValue 16 */
  shardCount?: number;
  /** Use this database (not dropped by stopAll); default: a fresh one on the shared Postgres. */
  db?: TestDatabase;
  /** Admin URL of the Postgres on which to create the fresh database. */
  adminUrl?: string;
  /** @defaultValue TEST_REDIS_URL (the shared Redis) */
  redisUrl?: string;
  /** @defaultValue a unique prefix */
  prefix?: string;
  /** Per-member prefix override (split-brain tests): member id → prefix. */
  prefixOf?: (id: string) => string;
  /** @defaultValue 1500 */
  leaseTtlMs?: number;
  /** @defaultValue 300 */
  membershipIntervalMs?: number;
  /** Extra daemon flags per member. */
  args?: (id: string) => string[];
  /** Queue every scheduled run goes to. @defaultValue 'fault' */
  queue?: string;
  /** Worker credit per daemon. @defaultValue 2000 */
  concurrency?: number;
  /** Forward daemon output (or set E2E_ECHO=1). */
  echo?: boolean;
}

export interface SpreadOptions {
  /** 'mixed' alternates at_least_once / at_most_once. @defaultValue 'at_most_once' */
  delivery?: DeliveryModeName | 'mixed';
  /** Delivery lease for at-least-once runs. @defaultValue 5000 */
  leaseMs?: number;
  /** Member ids to send the batches to (round robin). Default: every running member. */
  via?: string[];
  /** Runs per ScheduleBatch (≤ 1000). @defaultValue 500 */
  batchSize?: number;
}

export interface ShardRowInfo {
  shard: number;
  owner: string | null;
  fence: number;
}

export interface LogEvent {
  shard: number;
  fence?: number;
  reason?: string;
  /** Daemon's log timestamp (epoch ms). */
  at: number;
  /** Index of the line in the daemon's log. */
  index: number;
}

interface MemberState {
  id: string;
  daemon: DaemonProcess;
  worker: Worker;
  client: TimelaneClient;
}

/** Epoch ms of a pino log line (`time` is ISO). */
export function logTime(l: DaemonLogLine): number {
  const t = l.time;
  if (typeof t === 'number') return t;
  if (typeof t === 'string') return Date.parse(t);
  return NaN;
}

export class TestCluster {
  readonly members = new Map<string, MemberState>();
  /** Every daemon ever started per member id (restarts append). */
  readonly history = new Map<string, DaemonProcess[]>();
  readonly recorder = new DeliveryRecorder();
  readonly scheduled = new Map<string, ScheduledRun>();
  readonly prefix: string;
  readonly redisUrl: string;
  readonly queue: string;
  readonly leaseTtlMs: number;
  readonly membershipIntervalMs: number;
  readonly shardCount: number;
  /** A small pool for the test's own queries (ignores connection errors). */
  readonly pool: pg.Pool;
  private readonly retiredWorkers: Worker[] = [];
  private readonly retiredClients: TimelaneClient[] = [];
  private rr = 0;
  private stopped = false;

  private constructor(
    readonly db: TestDatabase,
    private readonly ownsDb: boolean,
    private readonly opts: ClusterOptions,
  ) {
    this.prefix = opts.prefix ?? redisPrefix();
    this.redisUrl = opts.redisUrl ?? TEST_REDIS_URL;
    this.queue = opts.queue ?? 'fault';
    this.leaseTtlMs = opts.leaseTtlMs ?? 1500;
    this.membershipIntervalMs = opts.membershipIntervalMs ?? 300;
    this.shardCount = opts.shardCount ?? 16;
    this.pool = createPool({ url: db.url, schema: 'timelane', poolSize: 4 });
  }

  /** Creates (or adopts) the database and starts every member. */
  static async start(opts: ClusterOptions = {}): Promise<TestCluster> {
    const shardCount = opts.shardCount ?? 16;
    const db = opts.db ?? (await createTestDatabase(shardCount, opts.adminUrl));
    const c = new TestCluster(db, !opts.db, { ...opts, shardCount });
    track(c, `test cluster ${c.prefix}`);
    try {
      // Start one by one: each start waits for the daemon's start line.
      for (const id of opts.members ?? ['a', 'b', 'c']) await c.startMember(id);
    } catch (err) {
      await c.stopAll();
      throw err;
    }
    return c;
  }

  prefixFor(id: string): string {
    return this.opts.prefixOf?.(id) ?? this.prefix;
  }

  /** Starts (or restarts) member `id` and a worker session to it. */
  async startMember(id: string, extraArgs: string[] = []): Promise<DaemonProcess> {
    if (this.members.has(id)) throw new Error(`member ${id} is already running`);
    const daemon = await startDaemon({
      databaseUrl: this.db.url,
      redisUrl: this.redisUrl,
      echo: this.opts.echo ?? process.env.E2E_ECHO === "1",
      args: [
        '--member-id', id,
        '--redis-prefix', this.prefixFor(id),
        '--lease-ttl-ms', String(this.leaseTtlMs),
        '--membership-interval-ms', String(this.membershipIntervalMs),
        ...(this.opts.args?.(id) ?? []),
        ...extraArgs,
      ],
    });
    const address = daemon.address;
    const worker = createWorker({
      address,
      queues: [this.queue],
      concurrency: this.opts.concurrency ?? 2000,
      workerId: `fault-${id}`,
      reconnectInitialMs: 50,
      reconnectMaxMs: 500,
      closeTimeoutMs: 3_000,
      handler: (run: DeliveredRunInfo) => {
        this.recorder.record({
          runId: run.runId,
          jobId: run.jobId,
          idempotencyKey: run.idempotencyKey,
          delivery: run.delivery,
          fence: run.fence,
          mode: run.mode,
          dueAtMs: run.dueAtMs,
          firedAtMs: run.firedAtMs,
          arrivedAtMs: run.arrivedAtMs,
          receivedAt: Date.now(),
          member: id,
          address,
        });
      },
    });
    track(worker, `worker → ${id} ${address}`);
    const client = track(new TimelaneClient(address, { timeoutMs: 15_000 }), `client → ${id} ${address}`);
    this.members.set(id, { id, daemon, worker, client });
    const h = this.history.get(id) ?? [];
    h.push(daemon);
    this.history.set(id, h);
    return daemon;
  }

  daemon(id: string): DaemonProcess {
    const m = this.members.get(id);
    if (!m) throw new Error(`no running member ${id}`);
    return m.daemon;
  }

  client(id?: string): TimelaneClient {
    const m = id ? this.members.get(id) : [...this.members.values()].find((s) => s.daemon.running);
    if (!m) throw new Error(`no running member ${id ?? ''}`);
    return m.client;
  }

  /** Member ids whose process is running. */
  liveIds(): string[] {
    return [...this.members.values()].filter((m) => m.daemon.running).map((m) => m.id);
  }

  /** kill -9 a member; its worker session and client are retired (closed in stopAll). Returns the time read just before the signal. */
  async killMember(id: string): Promise<number> {
    return (await this.killMemberTimed(id)).sentAt;
  }

  /**
   * killMember, with both ends of the kill: `sentAt` is read just before the
   * signal, `exitedAt` once the exit was seen. The member may still act
   * between the two (this process can lose its core between reading the clock
   * and signalling), never after the second: judge "done before the kill"
   * against `exitedAt` for what the member did, against `sentAt` for what the
   * test saw.
   */
  async killMemberTimed(id: string): Promise<{ sentAt: number; exitedAt: number }> {
    const m = this.members.get(id);
    if (!m) throw new Error(`no running member ${id}`);
    const sentAt = Date.now();
    await m.daemon.kill();
    const exitedAt = Date.now();
    untrack(m.daemon);
    this.retire(m);
    return { sentAt, exitedAt };
  }

  /** SIGTERM a member (graceful: it releases its shards). Returns the time the signal was sent. */
  async stopMember(id: string, graceMs = 10_000): Promise<{ at: number; code: number | null }> {
    const m = this.members.get(id);
    if (!m) throw new Error(`no running member ${id}`);
    const at = Date.now();
    const code = await m.daemon.stop(graceMs);
    untrack(m.daemon);
    this.retire(m);
    return { at, code };
  }

  private retire(m: MemberState): void {
    this.members.delete(m.id);
    this.retiredWorkers.push(m.worker);
    this.retiredClients.push(m.client);
  }

  // ------------------------------------------------------------ load ---

  /**
   * Schedules `n` one-shot runs due evenly over [fromMs, fromMs + overMs) via
   * ScheduleBatch. Returns them in due order (and remembers them for counts()).
   */
  async scheduleSpread(n: number, fromMs: number, overMs: number, opts: SpreadOptions = {}): Promise<ScheduledRun[]> {
    const delivery = opts.delivery ?? 'at_most_once';
    const leaseMs = opts.leaseMs ?? 5_000;
    const inputs: ScheduleInput[] = Array.from({ length: n }, (_, i) => {
      const mode: DeliveryModeName = delivery === 'mixed' ? (i % 2 === 0 ? 'at_least_once' : 'at_most_once') : delivery;
      return {
        queue: this.queue,
        at: fromMs + Math.floor((i * overMs) / n),
        payload: { i },
        delivery: mode,
        ...(mode === 'at_least_once' ? { leaseMs } : {}),
      };
    });
    const via = opts.via ?? this.liveIds();
    if (via.length === 0) throw new Error('scheduleSpread: no running member');
    const batches = chunks(inputs, Math.min(1000, opts.batchSize ?? 500));
    const results = await Promise.all(
      batches.map((batch) => {
        const id = via[this.rr++ % via.length];
        return this.client(id).scheduleBatch(batch);
      }),
    );
    const out: ScheduledRun[] = [];
    for (const r of results.flat()) {
      const s: ScheduledRun = { runId: r.run.id, jobId: r.job.id, shard: r.run.shard, dueAtMs: r.run.dueAtMs, mode: r.job.delivery };
      this.scheduled.set(s.runId, s);
      out.push(s);
    }
    return out;
  }

  /** Resolves true once every scheduled run (or every run of `runs`) was received at least once. */
  waitAllReceived(timeoutMs: number, runs?: readonly ScheduledRun[]): Promise<boolean> {
    const ids = runs ? runs.map((r) => r.runId) : [...this.scheduled.keys()];
    let i = 0; // ids before i are known received: receipts never disappear
    return this.recorder.waitFor(() => {
      while (i < ids.length && this.recorder.byRun.has(ids[i])) i++;
      return i === ids.length;
    }, timeoutMs);
  }

  /**
   * Waits until each shard of `fences` (shard → the fence it was held under)
   * had a run delivered by a member other than `not`, under a higher fence,
   * received at or after `since`: the shard fires elsewhere. Event-driven (on
   * each receipt). Resolves shard → that first delivery, or null on timeout.
   */
  async waitFiredElsewhere(fences: ReadonlyMap<number, number>, not: string, since: number, timeoutMs: number): Promise<Map<number, Delivery> | null> {
    const first = new Map<number, Delivery>();
    let i = 0;
    const scan = (): boolean => {
      const ds = this.recorder.deliveries;
      for (; i < ds.length; i++) {
        const d = ds[i];
        const shard = this.scheduled.get(d.runId)?.shard;
        if (shard === undefined || d.member === not || d.receivedAt < since || first.has(shard)) continue;
        const old = fences.get(shard);
        if (old !== undefined && d.fence > old) first.set(shard, d);
      }
      return first.size === fences.size;
    };
    return (await this.recorder.waitFor(scan, timeoutMs)) ? first : null;
  }

  /** Scheduled vs received. */
  counts(runs?: readonly ScheduledRun[]): Counts {
    const list = runs ?? [...this.scheduled.values()];
    let fired = 0;
    let dupAmo = 0;
    let dupAlo = 0;
    const lostIds: string[] = [];
    const duplicateIds: string[] = [];
    for (const s of list) {
      const got = this.recorder.byRun.get(s.runId);
      if (!got) {
        lostIds.push(s.runId);
        continue;
      }
      fired++;
      if (got.length > 1) {
        duplicateIds.push(s.runId);
        if (s.mode === 'at_most_once') dupAmo += got.length - 1;
        else dupAlo += got.length - 1;
      }
    }
    const unknown = [...this.recorder.byRun.keys()].filter((id) => !this.scheduled.has(id)).length;
    return {
      scheduled: list.length,
      fired,
      lost: lostIds.length,
      duplicates: dupAmo + dupAlo,
      duplicatesAtMostOnce: dupAmo,
      duplicatesAtLeastOnce: dupAlo,
      lostIds,
      duplicateIds,
      unknown,
    };
  }

  // ---------------------------------------------------- shards & logs ---

  /** `SELECT shard, owner, fence FROM timelane.shards` (throws if Postgres is away). */
  async shardRows(): Promise<ShardRowInfo[]> {
    const { rows } = await this.pool.query<{ shard: number; owner: string | null; fence: number }>(
      'SELECT shard, owner, fence FROM timelane.shards ORDER BY shard',
    );
    return rows.map((r) => ({ shard: r.shard, owner: r.owner, fence: Number(r.fence) }));
  }

  /**
   * Polls Postgres until every shard has an owner among `owners` (default:
   * the running members). Resolves the time it first held, or null on timeout.
   */
  async waitAllShardsOwned(timeoutMs: number, owners?: readonly string[], intervalMs = 25): Promise<number | null> {
    let at: number | null = null;
    await waitUntil(async () => {
      const allowed = new Set(owners ?? this.liveIds());
      try {
        const rows = await this.shardRows();
        if (rows.length === this.shardCount && rows.every((r) => r.owner !== null && allowed.has(r.owner))) {
          at = Date.now();
          return true;
        }
      } catch {
        /* Postgres away: keep polling */
      }
      return false;
    }, timeoutMs, intervalMs);
    return at;
  }

  /** Every daemon process started for `id` (restarts included), or the given one. */
  private processesOf(id: string): DaemonProcess[] {
    return this.history.get(id) ?? [];
  }

  /** Log lines with this `msg`, of every process of member `id`. */
  logs(id: string, msg: string): DaemonLogLine[] {
    return this.processesOf(id).flatMap((d) => d.logs.filter((l) => l.msg === msg));
  }

  private events(d: DaemonProcess, msg: string): LogEvent[] {
    const out: LogEvent[] = [];
    d.logs.forEach((l, index) => {
      if (l.msg !== msg) return;
      out.push({
        shard: Number(l.shard),
        fence: l.fence === undefined ? undefined : Number(l.fence),
        reason: typeof l.reason === 'string' ? l.reason : undefined,
        at: logTime(l),
        index,
      });
    });
    return out;
  }

  /** 'shard acquired' events of member `id` (all its processes). */
  acquired(id: string): LogEvent[] {
    return this.processesOf(id).flatMap((d) => this.events(d, 'shard acquired'));
  }

  /** 'shard dropped' events of member `id` (all its processes). */
  dropped(id: string): LogEvent[] {
    return this.processesOf(id).flatMap((d) => this.events(d, 'shard dropped'));
  }

  /** Lines at `minLevel` or above (50 = error) of every process of every member. */
  problems(minLevel = 50): string[] {
    return [...this.history.entries()].flatMap(([id, ds]) =>
      ds.flatMap((d) => d.logs.filter((l) => (l.level ?? 0) >= minLevel).map((l) => `${id}: ${JSON.stringify(l)}`)),
    );
  }

  /** Runs of this test still 'scheduled' in Postgres, and their statuses by delivery mode. */
  async runStatuses(): Promise<{ status: string; delivery: string; n: number }[]> {
    const { rows } = await this.pool.query<{ status: string; delivery: string; n: string }>(
      `SELECT r.status, j.delivery, count(*) AS n FROM timelane.runs r JOIN timelane.jobs j ON j.id = r.job_id
        GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    return rows.map((r) => ({ status: r.status, delivery: r.delivery, n: Number(r.n) }));
  }

  /** Postgres's view of some runs (e.g. the lost ones): status, fence, claim and hand-off times, delivery mode. */
  async runRows(ids: readonly string[]): Promise<{ id: string; shard: number; status: string; fence: number; firedAtMs: number | null; claimedAtMs: number | null; deliveries: number; delivery: string }[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<{ id: string; shard: number; status: string; fence: string; fired_at_ms: string | null; claimed_at_ms: string | null; deliveries: number; delivery: string }>(
      `SELECT r.id::text AS id, r.shard, r.status, r.fence, (extract(epoch FROM r.fired_at) * 1000)::int8 AS fired_at_ms, (extract(epoch FROM r.claimed_at) * 1000)::int8 AS claimed_at_ms, r.deliveries, j.delivery
         FROM timelane.runs r JOIN timelane.jobs j ON j.id = r.job_id WHERE r.id = ANY($1::int8[]) ORDER BY r.id`,
      [ids.map((id) => id)],
    );
    return rows.map((r) => ({
      id: r.id,
      shard: r.shard,
      status: r.status,
      fence: Number(r.fence),
      firedAtMs: r.fired_at_ms === null ? null : Number(r.fired_at_ms),
      claimedAtMs: r.claimed_at_ms === null ? null : Number(r.claimed_at_ms),
      deliveries: r.deliveries,
      delivery: r.delivery,
    }));
  }

  /** Prints a one-line summary with a tag (kept in the vitest output). */
  report(tag: string, extra: Record<string, unknown> = {}): void {
    const c = this.counts();
    const summary = { ...c, lostIds: c.lostIds.slice(0, 10), duplicateIds: c.duplicateIds.slice(0, 10), receipts: this.recorder.deliveries.length, ...extra };
    console.log(`[${tag}] ${JSON.stringify(summary)}`);
  }

  // ------------------------------------------------------------ stop ---

  /** Stops workers, clients and daemons; deletes the Redis prefix(es) and a database it created. Idempotent. */
  async stopAll(opts: { keepRedisKeys?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const states = [...this.members.values()];
    this.members.clear();
    const workers = [...states.map((s) => s.worker), ...this.retiredWorkers];
    await Promise.all(
      workers.map((w) =>
        w
          .close(3_000)
          .catch(() => undefined)
          .finally(() => untrack(w)),
      ),
    );
    for (const c of [...states.map((s) => s.client), ...this.retiredClients]) {
      c.close();
      untrack(c);
    }
    await Promise.all(
      states.map(async (s) => {
        await s.daemon.stop(5_000).catch(() => undefined);
        untrack(s.daemon);
      }),
    );
    // Anything still alive from an earlier life (should be none).
    for (const ds of this.history.values()) {
      for (const d of ds) {
        if (d.running) await d.kill().catch(() => undefined);
        untrack(d);
      }
    }
    if (!opts.keepRedisKeys) {
      const prefixes = new Set([this.prefix, ...[...this.history.keys()].map((id) => this.prefixFor(id))]);
      for (const p of prefixes) await withTimeout(deleteRedisPrefix(p, this.redisUrl), 5_000).catch(() => undefined);
    }
    await this.pool.end().catch(() => undefined);
    if (this.ownsDb) await this.db.drop().catch(() => undefined);
    untrack(this);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
