/**
 * timelane in the peers bench: one daemon as a child process
 * (ops/local/daemon-process.ts) on a fresh migrated database and a unique
 * Redis key prefix (bench/lib/infra.ts, as bench/lib/trial.ts does), driven
 * only through the public client API: `TimelaneClient.scheduleBatch` with
 * absolute `at` due times and a `{"i": n}` payload, and one `createWorker`
 * consumer (credit `concurrency`) in the bench process, like the other
 * systems' consumers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWorker, TimelaneClient, type Worker } from '@timelane/client';
import { receiptNowMs } from '../receipt-clock.js';
import { DaemonProcess } from '../../../ops/local/daemon-process.js';
import { benchRedisPrefix, createBenchDatabase, type BenchDatabase } from '../infra.js';
import { onExitKill, Resources } from '../resources.js';
import { sendInChunks } from './chunks.js';
import { payloadIndex, type OnReceipt, type OnScheduled, type PeerAdapter, type PeerJob, type PeerSettings } from './types.js';

const QUEUE = 'peers';
const SHARDS = 64;

/** The scenario index from a delivered payload (JSON `{"i": n}`), -1 if unreadable. */
function indexOf(payload: Buffer): number {
  try {
    return payloadIndex(JSON.parse(payload.toString('utf8')));
  } catch {
    return -1;
  }
}

export interface TimelaneTuning {
  /** Worker credit (max in flight). */
  concurrency: number;
  echoDaemon: boolean;
}

/** SIGKILLs daemons we spawned for `database` that DaemonProcess.start could not hand back (start timed out). */
function killStrayDaemons(database: string): void {
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
      if (cmd.some((a) => a.endsWith(`${path.sep}cli.js`)) && cmd.some((a) => a.includes(`/${database}`))) process.kill(Number(d), 'SIGKILL');
    } catch {
      /* gone, or not ours */
    }
  }
}

export class TimelaneAdapter implements PeerAdapter {
  readonly system = 'timelane' as const;
  private readonly res = new Resources();
  private db: BenchDatabase | undefined;
  private daemon: DaemonProcess | undefined;
  private client: TimelaneClient | undefined;
  private worker: Worker | undefined;

  constructor(
    private readonly settings: PeerSettings,
    private readonly tuning: TimelaneTuning,
  ) {}

  describe(): string {
    return `1 daemon (child process, ${SHARDS} shards, default flags), ScheduleBatch of ${this.settings.chunkSize} × ${this.settings.parallel} in flight, createWorker credit ${this.tuning.concurrency}`;
  }

  async setup(): Promise<void> {
    const { adminUrl, redisUrl } = this.settings;
    this.db = await createBenchDatabase(adminUrl, SHARDS, [], this.res);
    const db = this.db;
    const prefix = benchRedisPrefix(redisUrl, this.res);
    this.res.defer('kill stray daemons', () => killStrayDaemons(db.name));
    const daemon = await DaemonProcess.start({
      databaseUrl: db.url,
      redisUrl,
      args: ['--redis-prefix', prefix, '--metrics-address', '', '--member-id', `peers-${process.pid}`],
      echo: this.tuning.echoDaemon,
      startTimeoutMs: 30_000,
    });
    this.daemon = daemon;
    const unregister = onExitKill(() => daemon.child.kill('SIGKILL'));
    this.res.defer('stop daemon', async () => {
      await daemon.stop(10_000);
      unregister();
    });
    const client = new TimelaneClient(daemon.address, { timeoutMs: 60_000 });
    this.client = client;
    this.res.defer('close client', () => client.close());
    const deadline = Date.now() + 30_000;
    while (!(await client.listShards()).every((s) => s.ownedHere)) {
      if (Date.now() > deadline) throw new Error('timelane: the daemon did not own every shard within 30 s');
      await sleep(100);
    }
  }

  async consume(onReceipt: OnReceipt): Promise<void> {
    const daemon = this.need(this.daemon, 'setup');
    const worker = createWorker({
      address: daemon.address,
      queues: [QUEUE],
      concurrency: this.tuning.concurrency,
      workerId: `peers-${process.pid}`,
      handler: (run) => {
        const at = receiptNowMs(); // the fire-lag bench's receipt clock (re-anchored every second)
        onReceipt(indexOf(run.payload), at);
      },
      onError: (err) => this.settings.log(`timelane worker: ${err.message}`),
    });
    this.worker = worker;
    this.res.defer('close worker', () => worker.close(5_000));
  }

  async schedule(jobs: readonly PeerJob[], onScheduled: OnScheduled): Promise<void> {
    const client = this.need(this.client, 'setup');
    await sendInChunks(
      jobs,
      this.settings.chunkSize,
      this.settings.parallel,
      async (chunk) => {
        await client.scheduleBatch(chunk.map((j) => ({ queue: QUEUE, at: j.dueAtMs, payload: { i: j.index } })));
      },
      onScheduled,
    );
  }

  teardown(): Promise<void> {
    return this.res.closeAll();
  }

  daemonPid(): number | undefined {
    return this.daemon?.pid;
  }

  database(): string | undefined {
    return this.db?.name;
  }

  private need<T>(v: T | undefined, step: string): T {
    if (v === undefined) throw new Error(`timelane: call ${step}() first`);
    return v;
  }
}
