/**
 * BullMQ in the peers bench, two variants of one adapter:
 * - `bullmq`: the shared Redis (127.0.0.1:6379, its own config, normally
 *   hz 10) under a unique key prefix `tl_peers_<random>`, whose keys are
 *   deleted at the end;
 * - `bullmq_hz100`: a private redis-server started for this run with
 *   `--hz 100 --save "" --appendonly no`, killed at the end.
 *
 * Jobs are delayed jobs (`addBulk` with `delay` = due − now and `timestamp` =
 * that same now, so BullMQ's own due time, timestamp + delay, is exactly the
 * scenario's). One Worker (concurrency `concurrency`) in the bench process
 * records each job and returns, which completes it; jobs are removed on
 * completion (`removeOnComplete: true`, as BullMQ's docs advise for
 * high-volume queues). Since BullMQ 5 the Worker itself promotes delayed
 * jobs: it blocks on Redis (BZPOPMIN on the marker key) until the next
 * delayed job is due — Redis times such blocks out on its event-loop ticks,
 * hence the hz variant.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { wallNowMs } from '@timelane/client';
import { deleteRedisPrefix, randomSuffix } from '../infra.js';
import { Resources } from '../resources.js';
import { sendInChunks } from './chunks.js';
import { startPrivateRedis } from './redis-server.js';
import { payloadIndex, type OnReceipt, type OnScheduled, type PeerAdapter, type PeerJob, type PeerSettings } from './types.js';

const QUEUE = 'peers';

interface JobData {
  i: number;
}

export interface BullmqTuning {
  /** Worker concurrency (jobs processed at once). */
  concurrency: number;
  /** Start a private redis-server with `--hz <hz>`; undefined uses the shared Redis. */
  privateHz: number | undefined;
}

async function serverHz(url: string): Promise<string> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await r.connect();
    const [, hz] = (await r.config('GET', 'hz')) as string[];
    const [, dynamic] = (await r.config('GET', 'dynamic-hz')) as string[];
    return `hz ${hz ?? '?'}${dynamic === 'yes' ? ' (dynamic-hz)' : ''}`;
  } catch (err) {
    return `hz ? (${(err as Error).message})`;
  } finally {
    r.disconnect();
  }
}

export class BullmqAdapter implements PeerAdapter {
  private readonly res = new Resources();
  private readonly prefix = `tl_peers_${randomSuffix()}`;
  private url = '';
  private hz = '';
  private queue: Queue<JobData> | undefined;
  private worker: Worker<JobData> | undefined;
  private readonly errors: string[] = [];

  constructor(
    readonly system: 'bullmq' | 'bullmq_hz100',
    private readonly settings: PeerSettings,
    private readonly tuning: BullmqTuning,
  ) {}

  describe(): string {
    const where = this.tuning.privateHz === undefined ? `shared Redis ${this.url}` : `private redis-server ${this.url} (--save "" --appendonly no)`;
    return `${where}, ${this.hz}, prefix ${this.prefix}; addBulk of ${this.settings.chunkSize} × ${this.settings.parallel} in flight with delay; Worker concurrency ${this.tuning.concurrency}, removeOnComplete`;
  }

  private connection(): { host: string; port: number; maxRetriesPerRequest: null } {
    const u = new URL(this.url);
    return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
  }

  async setup(): Promise<void> {
    if (this.tuning.privateHz === undefined) {
      this.url = this.settings.redisUrl;
      const { url, prefix } = this;
      this.res.defer(`delete redis keys ${prefix}:*`, () => deleteRedisPrefix(url, `${prefix}:`));
    } else {
      this.url = (await startPrivateRedis(['--hz', String(this.tuning.privateHz)], this.res)).url;
    }
    this.hz = await serverHz(this.url);
    const queue = new Queue<JobData>(QUEUE, { connection: this.connection(), prefix: this.prefix });
    this.queue = queue;
    queue.on('error', (err: Error) => this.error('queue', err));
    this.res.defer('close queue', () => queue.close());
    await queue.waitUntilReady();
  }

  async consume(onReceipt: OnReceipt): Promise<void> {
    const worker = new Worker<JobData>(
      QUEUE,
      async (job) => {
        const at = wallNowMs();
        onReceipt(payloadIndex(job.data), at);
      },
      { connection: this.connection(), prefix: this.prefix, concurrency: this.tuning.concurrency },
    );
    this.worker = worker;
    worker.on('error', (err: Error) => this.error('worker', err));
    this.res.defer('close worker', () => worker.close());
    await worker.waitUntilReady();
  }

  async schedule(jobs: readonly PeerJob[], onScheduled: OnScheduled): Promise<void> {
    const queue = this.queue;
    if (!queue) throw new Error('bullmq: call setup() first');
    await sendInChunks(
      jobs,
      this.settings.chunkSize,
      this.settings.parallel,
      async (chunk) => {
        const now = Date.now();
        await queue.addBulk(chunk.map((j) => ({ name: 'peer', data: { i: j.index }, opts: { delay: Math.max(0, j.dueAtMs - now), timestamp: now, removeOnComplete: true } })));
      },
      onScheduled,
    );
  }

  teardown(): Promise<void> {
    if (this.errors.length) this.settings.log(`${this.system}: ${this.errors.length} client errors, first: ${this.errors[0]}`);
    return this.res.closeAll();
  }

  daemonPid(): undefined {
    return undefined;
  }

  database(): undefined {
    return undefined;
  }

  private error(who: string, err: Error): void {
    if (this.errors.length < 20) this.errors.push(`${who}: ${err.message}`);
  }
}
