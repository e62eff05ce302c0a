/**
 * graphile-worker in the peers bench: its own schema (`graphile_worker`,
 * installed by `WorkerUtils.migrate()`) in a fresh database, jobs added with
 * `addJobs()` (one `add_jobs` call per chunk) and `runAt` = the due time
 * (`run_at`).
 *
 * One runner (`run()`, a pool of `concurrentJobs` workers) in the bench
 * process. graphile-worker LISTENs for `jobs:insert`, but that NOTIFY fires
 * when a job is inserted, not when it comes due: a future job is found by
 * the next poll, every `pollInterval`. Tuned per its docs: batching on as its
 * performance page recommends for high throughput (`localQueue.size` 500: the
 * pool fetches and locks up to 500 due jobs per query and re-fetches at once
 * when it got a full batch; `completeJobBatchDelay` / `failJobBatchDelay` 0:
 * completions of one tick share a statement), `concurrentJobs` 24 and
 * `maxPoolSize` concurrentJobs + 2 (its perf-test preset), and `pollInterval`
 * 100 ms in place of the 2,000 ms default (there is no documented floor; one
 * cheap indexed query per interval with the local queue).
 */
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { wallNowMs } from '@timelane/client';
import { Resources } from '../resources.js';
import { sendInChunks } from './chunks.js';
import { createPeerDatabase, type PeerDatabase } from './database.js';
import { payloadIndex, type OnReceipt, type OnScheduled, type PeerAdapter, type PeerJob, type PeerSettings } from './types.js';

const TASK = 'peer';

export interface GraphileTuning {
  pollIntervalMs: number;
  concurrentJobs: number;
  localQueueSize: number;
}

export class GraphileAdapter implements PeerAdapter {
  readonly system = 'graphile' as const;
  private readonly res = new Resources();
  private db: PeerDatabase | undefined;
  private utils: WorkerUtils | undefined;
  private readonly logger: Logger;

  constructor(
    private readonly settings: PeerSettings,
    private readonly tuning: GraphileTuning,
  ) {
    // Its default logger writes info lines to stdout, which carries only the report here.
    this.logger = new Logger(() => (level, message) => {
      if (level === 'error' || level === 'warning') settings.log(`graphile ${level}: ${message}`);
    });
  }

  describe(): string {
    const t = this.tuning;
    return `schema graphile_worker in ${this.db?.name ?? 'a fresh database'}; addJobs() of ${this.settings.chunkSize} × ${this.settings.parallel} in flight with runAt; run() pollInterval ${t.pollIntervalMs} ms, concurrentJobs ${t.concurrentJobs}, maxPoolSize ${this.poolSize()}, localQueue.size ${t.localQueueSize}, completeJobBatchDelay 0`;
  }

  private poolSize(): number {
    return Math.max(10, this.tuning.concurrentJobs + 2);
  }

  async setup(): Promise<void> {
    const db = await createPeerDatabase(this.settings.adminUrl, 'graphile', this.res);
    this.db = db;
    const utils = await makeWorkerUtils({ connectionString: db.url, logger: this.logger });
    this.res.defer('release worker utils', () => utils.release());
    this.utils = utils;
    await utils.migrate();
  }

  async consume(onReceipt: OnReceipt): Promise<void> {
    const db = this.db;
    if (!db) throw new Error('graphile: call setup() first');
    const t = this.tuning;
    const runner: Runner = await run({
      noHandleSignals: true,
      taskList: {
        [TASK]: (payload: unknown) => {
          const at = wallNowMs();
          onReceipt(payloadIndex(payload), at);
        },
      },
      preset: {
        worker: {
          connectionString: db.url,
          logger: this.logger,
          pollInterval: t.pollIntervalMs,
          concurrentJobs: t.concurrentJobs,
          maxPoolSize: this.poolSize(),
          localQueue: { size: t.localQueueSize },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    this.res.defer('stop runner', async () => {
      await runner.stop();
      await runner.promise.catch(() => undefined);
    });
  }

  async schedule(jobs: readonly PeerJob[], onScheduled: OnScheduled): Promise<void> {
    const utils = this.utils;
    if (!utils) throw new Error('graphile: call setup() first');
    await sendInChunks(
      jobs,
      this.settings.chunkSize,
      this.settings.parallel,
      async (chunk) => {
        await utils.addJobs(chunk.map((j) => ({ identifier: TASK, payload: { i: j.index }, runAt: new Date(j.dueAtMs) })));
      },
      onScheduled,
    );
  }

  teardown(): Promise<void> {
    return this.res.closeAll();
  }

  daemonPid(): undefined {
    return undefined;
  }

  database(): string | undefined {
    return this.db?.name;
  }
}
