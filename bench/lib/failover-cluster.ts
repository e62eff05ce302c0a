/**
 * The failover bench's cluster: N daemons (child processes, member ids a, b,
 * c) on one fresh bench database and one unique Redis prefix, one TimelaneClient
 * per daemon, and one in-process worker holding a stream to every daemon (each
 * daemon delivers only its own shards' fires) that records every delivery.
 *
 * Everything is registered with a bench Resources scope (bench/lib/resources.ts)
 * and stopped in reverse order at the end, on error, on Ctrl-C and past the
 * time budget; daemons also get a SIGKILL on process exit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { DaemonProcess, type DaemonLogLine } from '../../ops/local/daemon-process.js';
import { createWorker, type ShardInfo, TimelaneClient, wallNowMs, type Worker } from '@timelane/client';
import { receiptNowMs } from './receipt-clock.js';
import { onExitKill, type Resources } from './resources.js';
import type { BenchDatabase } from './infra.js';

export interface MemberHandle {
  id: string;
  daemon: DaemonProcess;
  client: TimelaneClient;
}

export interface FailoverClusterOptions {
  db: BenchDatabase;
  redisUrl: string;
  prefix: string;
  leaseTtlMs: number;
  membershipIntervalMs: number;
  poolSize: number;
  daemonArgs: string[];
  echo: boolean;
}

/**
 * Every delivery the worker saw, in columns. Times are wall-clock epoch ms;
 * `handledAtMs` (handler start, sub-ms) is the receipt time lag is measured on.
 */
export class FailoverReceipts {
  readonly runId: number[] = [];
  readonly delivery: number[] = [];
  readonly fence: number[] = [];
  /** 1 at-least-once, 0 at-most-once. */
  readonly alo: number[] = [];
  readonly dueAtMs: number[] = [];
  readonly firedAtMs: number[] = [];
  readonly arrivedAtMs: number[] = [];
  readonly handledAtMs: number[] = [];

  get length(): number {
    return this.runId.length;
  }
}

/** SIGKILLs daemons we spawned for `database` that DaemonProcess could not hand back (start timed out). */
export function killStrayDaemons(database: string): void {
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((x) => /^\d+$/.test(x));
  } catch {
    return;
  }
  for (const d of pids) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd.some((a) => a.endsWith(`${path.sep}cli.js`)) && cmd.includes('daemon') && cmd.some((a) => a.includes(`/${database}`))) process.kill(Number(d), 'SIGKILL');
    } catch {
      /* gone, or not ours */
    }
  }
}

/** Epoch ms of a pino log line (`time` is ISO with ms). */
export function logTime(l: DaemonLogLine): number {
  const t = l.time;
  if (typeof t === 'number') return t;
  if (typeof t === 'string') return Date.parse(t);
  return Number.NaN;
}

export class FailoverCluster {
  readonly members = new Map<string, MemberHandle>();
  readonly receipts = new FailoverReceipts();
  readonly workerErrors: { at: number; member: string; message: string }[] = [];
  private worker: Worker | undefined;
  private redis: Redis | undefined;

  constructor(
    private readonly opts: FailoverClusterOptions,
    private readonly res: Resources,
  ) {
    res.defer('kill stray daemons', () => killStrayDaemons(opts.db.name));
  }

  /** Starts the members in parallel (each waits for its start line). */
  async start(ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.startMember(id)));
  }

  async startMember(id: string): Promise<MemberHandle> {
    const o = this.opts;
    const daemon = await DaemonProcess.start({
      databaseUrl: o.db.url,
      redisUrl: o.redisUrl,
      args: [
        '--member-id', id,
        '--redis-prefix', o.prefix,
        '--lease-ttl-ms', String(o.leaseTtlMs),
        '--membership-interval-ms', String(o.membershipIntervalMs),
        '--database-pool-size', String(o.poolSize),
        ...o.daemonArgs,
      ],
      echo: o.echo,
      startTimeoutMs: 30_000,
    });
    const unregisterKill = onExitKill(() => daemon.child.kill('SIGKILL'));
    this.res.defer(`stop daemon ${id}`, async () => {
      await daemon.stop(8_000);
      unregisterKill();
    });
    const client = new TimelaneClient(daemon.address, { timeoutMs: 30_000 });
    this.res.defer(`close client ${id}`, () => client.close());
    const m: MemberHandle = { id, daemon, client };
    this.members.set(id, m);
    return m;
  }

  member(id: string): MemberHandle {
    const m = this.members.get(id);
    if (!m) throw new Error(`no member ${id}`);
    return m;
  }

  liveIds(): string[] {
    return [...this.members.values()].filter((m) => m.daemon.running).map((m) => m.id);
  }

  /** A client of some running member. */
  anyClient(except?: string): TimelaneClient {
    const m = [...this.members.values()].find((x) => x.daemon.running && x.id !== except);
    if (!m) throw new Error('no running member');
    return m.client;
  }

  /** One worker, one stream per member, recording every delivery; answers Complete at once. */
  startWorker(queues: string[], concurrency: number): void {
    const r = this.receipts;
    const memberOf = new Map([...this.members.values()].map((m) => [m.daemon.address, m.id]));
    this.worker = createWorker({
      address: [...this.members.values()].map((m) => m.daemon.address),
      queues,
      concurrency,
      workerId: `bench-failover-${process.pid}`,
      reconnectInitialMs: 50,
      reconnectMaxMs: 500,
      closeTimeoutMs: 3_000,
      handler: (run) => {
        // The receipt clock (receipt-clock.ts), as in the fire-lag bench: the client library's may read up to 1 ms low for good, which counted as "early".
        const handled = receiptNowMs();
        r.handledAtMs.push(handled);
        r.runId.push(Number(run.runId));
        r.delivery.push(run.delivery);
        r.fence.push(run.fence);
        r.alo.push(run.mode === 'at_least_once' ? 1 : 0);
        r.dueAtMs.push(run.dueAtMs);
        r.firedAtMs.push(run.firedAtMs);
        r.arrivedAtMs.push(run.arrivedAtMs + (handled - wallNowMs()));
      },
      onError: (err, info) => {
        if (this.workerErrors.length < 1000) this.workerErrors.push({ at: Date.now(), member: memberOf.get(info.address) ?? info.address, message: err.message });
      },
    });
    const w = this.worker;
    this.res.defer('close worker', () => w.close(3_000));
  }

  /** A Redis connection of the bench's own (closed at the end). */
  redisClient(): Redis {
    if (!this.redis) {
      const r = new Redis(this.opts.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 5_000 });
      r.on('error', () => undefined);
      this.redis = r;
      this.res.defer('close bench redis connection', () => r.disconnect());
    }
    return this.redis;
  }

  /** Remaining TTL (ms) of the lease keys of `shards` and of member `id`'s record and liveness key, read now. */
  async pttls(id: string, shards: number[]): Promise<{ at: number; member: number; alive: number; leases: Map<number, number> }> {
    const r = this.redisClient();
    const p = this.opts.prefix;
    const pipe = r.pipeline();
    pipe.pttl(`${p}member:${id}`);
    pipe.pttl(`${p}alive:${id}`);
    for (const s of shards) pipe.pttl(`${p}lease:${s}`);
    const at = Date.now();
    const out = (await pipe.exec()) ?? [];
    const val = (i: number): number => {
      const e = out[i];
      return e && !e[0] ? Number(e[1]) : Number.NaN;
    };
    return { at, member: val(0), alive: val(1), leases: new Map(shards.map((s, i) => [s, val(i + 2)])) };
  }

  /** kill -9 member `id`; returns the wall time just before the signal. */
  async kill(id: string): Promise<number> {
    const m = this.member(id);
    const at = receiptNowMs();
    await m.daemon.kill();
    return at;
  }

  /**
   * SIGSTOP member `id` (a frozen VM, a long GC pause); returns the wall time
   * just before the signal. It stays frozen: teardown's stop() sends SIGCONT
   * before SIGTERM.
   */
  freeze(id: string): number {
    const m = this.member(id);
    const at = receiptNowMs();
    m.daemon.signal('SIGSTOP');
    return at;
  }

  /** Log lines with `msg` of member `id` after `sinceMs`, with their times. */
  logEvents(id: string, msg: string, sinceMs = -Infinity): { at: number; line: DaemonLogLine }[] {
    const m = this.members.get(id);
    if (!m) return [];
    return m.daemon.logs.filter((l) => l.msg === msg).map((line) => ({ at: logTime(line), line })).filter((e) => e.at >= sinceMs);
  }

  /**
   * Who held `shard` under `fence` (its 'shard acquired' line) and when it let
   * the shard go after that ('shard released' / 'shard dropped').
   */
  fenceHolder(shard: number, fence: number): { member: string; acquiredAt: number; endedAt?: number; how?: string } | undefined {
    for (const m of this.members.values()) {
      const acq = m.daemon.logs.find((l) => l.msg === 'shard acquired' && Number(l.shard) === shard && Number(l.fence) === fence);
      if (!acq) continue;
      const acquiredAt = logTime(acq);
      const end = m.daemon.logs.find((l) => (l.msg === 'shard released' || l.msg === 'shard dropped') && Number(l.shard) === shard && logTime(l) >= acquiredAt);
      return { member: m.id, acquiredAt, endedAt: end ? logTime(end) : undefined, how: end ? (end.msg === 'shard released' ? 'released' : `dropped: ${String(end.reason)}`) : undefined };
    }
    return undefined;
  }

  /** Warn-or-worse lines of every member (first few). */
  problems(minLevel = 40, limit = 10): string[] {
    const out: string[] = [];
    for (const m of this.members.values()) {
      for (const l of m.daemon.logs) {
        if ((l.level ?? 0) >= minLevel && out.length < limit) out.push(`${m.id}: ${String(l.msg)}${l.reason ? ` (${String(l.reason)})` : ''}${l.shard !== undefined ? ` shard ${String(l.shard)}` : ''}`);
      }
    }
    return out;
  }

  async listShards(except?: string): Promise<ShardInfo[]> {
    return this.anyClient(except).listShards();
  }
}

export interface RunRow {
  id: number;
  shard: number;
  status: string;
  fence: number;
  deliveries: number;
  alo: boolean;
  firedAtMs: number | null;
  claimedAtMs: number | null;
}

/** Postgres's view of some runs (e.g. the ones the worker never received). */
export async function runRows(db: BenchDatabase, ids: number[]): Promise<RunRow[]> {
  if (ids.length === 0) return [];
  const c = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<{ id: string; shard: number; status: string; fence: string; deliveries: number; delivery: string; fired_at_ms: string | null; claimed_at_ms: string | null }>(
      `SELECT r.id, r.shard, r.status, r.fence, r.deliveries, j.delivery, (extract(epoch FROM r.fired_at) * 1000)::int8 AS fired_at_ms, (extract(epoch FROM r.claimed_at) * 1000)::int8 AS claimed_at_ms
         FROM ${db.schema}.runs r JOIN ${db.schema}.jobs j ON j.id = r.job_id WHERE r.id = ANY($1::int8[])`,
      [ids],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      shard: r.shard,
      status: r.status,
      fence: Number(r.fence),
      deliveries: r.deliveries,
      alo: r.delivery === 'at_least_once',
      firedAtMs: r.fired_at_ms === null ? null : Number(r.fired_at_ms),
      claimedAtMs: r.claimed_at_ms === null ? null : Number(r.claimed_at_ms),
    }));
  } finally {
    await c.end();
  }
}

/** Run statuses of a queue at the end. */
export async function statusCounts(db: BenchDatabase, queue: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${db.schema}.runs WHERE queue = $1 GROUP BY 1 ORDER BY 1`, [queue]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    await c.end();
  }
}
