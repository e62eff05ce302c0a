/**
 * pg-boss in the peers bench: its own schema (`pgboss`, created by
 * `start()`) in a fresh database, one queue (`createQueue`, standard
 * policy), jobs inserted with `insert()` (one statement per chunk) and a
 * per-job `startAfter` = the due time.
 *
 * One `work()` consumer in the bench process. pg-boss has no notification
 * path: a worker polls — fetch up to `batchSize` jobs whose `start_after` has
 * passed, run the handler on the batch, complete the batch, then wait out the
 * rest of `pollingIntervalSeconds` (even when it found jobs). Tuned per its
 * docs: the polling interval at its minimum (0.5 s, enforced by pg-boss), and
 * a batch size that can take twice what comes due per interval
 * (`batchSize` ≥ rate × 0.5 s × 2), so throughput is never capped by the
 * batch; cron scheduling off (`schedule: false`: no cron jobs here);
 * maintenance (supervise) on, as deployed.
 */
import PgBoss from 'pg-boss';
import { wallNowMs } from '@timelane/client';
import { Resources } from '../resources.js';
import { sendInChunks } from './chunks.js';
import { createPeerDatabase, type PeerDatabase } from './database.js';
import { payloadIndex, type OnReceipt, type OnScheduled, type PeerAdapter, type PeerJob, type PeerSettings } from './types.js';

const QUEUE = 'peers';
/** pg-boss's floor for pollingIntervalSeconds (MIN_POLLING_INTERVAL_MS in its attorney.js). */
export const PGBOSS_MIN_POLL_SECONDS = 0.5;

export interface PgbossTuning {
  /** Jobs fetched per poll. */
  batchSize: number;
  pollSeconds: number;
}

/** Default batch: twice what comes due in one minimal polling interval, at least 100. */
export function defaultPgbossBatch(rate: number): number {
  return Math.max(100, Math.ceil(rate * PGBOSS_MIN_POLL_SECONDS * 2));
}

export class PgbossAdapter implements PeerAdapter {
  readonly system = 'pgboss' as const;
  private readonly res = new Resources();
  private db: PeerDatabase | undefined;
  private boss: PgBoss | undefined;
  private readonly errors: string[] = [];

  constructor(
    private readonly settings: PeerSettings,
    private readonly tuning: PgbossTuning,
  ) {}

  describe(): string {
    return `schema pgboss in ${this.db?.name ?? 'a fresh database'}; insert() of ${this.settings.chunkSize} × ${this.settings.parallel} in flight with startAfter; work() pollingIntervalSeconds ${this.tuning.pollSeconds}, batchSize ${this.tuning.batchSize}; schedule off`;
  }

  async setup(): Promise<void> {
    const db = await createPeerDatabase(this.settings.adminUrl, 'pgboss', this.res);
    this.db = db;
    const boss = new PgBoss({ connectionString: db.url, schema: 'pgboss', schedule: false });
    boss.on('error', (err: Error) => {
      if (this.errors.length < 20) this.errors.push(err.message);
    });
    // Registered before start() so a half-started boss is stopped too (runs before the database drop).
    this.res.defer('stop pg-boss', () => boss.stop({ graceful: true, wait: true, timeout: 5_000 }));
    await boss.start();
    this.boss = boss;
    await boss.createQueue(QUEUE);
  }

  async consume(onReceipt: OnReceipt): Promise<void> {
    const boss = this.need();
    await boss.work<unknown>(QUEUE, { pollingIntervalSeconds: this.tuning.pollSeconds, batchSize: this.tuning.batchSize }, async (jobs) => {
      const at = wallNowMs();
      for (const job of jobs) onReceipt(payloadIndex(job.data), at);
    });
  }

  async schedule(jobs: readonly PeerJob[], onScheduled: OnScheduled): Promise<void> {
    const boss = this.need();
    await sendInChunks(
      jobs,
      this.settings.chunkSize,
      this.settings.parallel,
      (chunk) => boss.insert(chunk.map((j) => ({ name: QUEUE, data: { i: j.index }, startAfter: new Date(j.dueAtMs) }))),
      onScheduled,
    );
  }

  teardown(): Promise<void> {
    if (this.errors.length) this.settings.log(`pgboss: ${this.errors.length} errors, first: ${this.errors[0]}`);
    return this.res.closeAll();
  }

  daemonPid(): undefined {
    return undefined;
  }

  database(): string | undefined {
    return this.db?.name;
  }

  private need(): PgBoss {
    if (!this.boss) throw new Error('pgboss: call setup() first');
    return this.boss;
  }
}
