/**
 * A real daemon serving the web console (its own test database, Redis
 * cluster mode with one member, 4 shards) with real data made through the
 * public API: one-shot runs a worker completes, one that dies (a dead
 * letter), an interval job firing every second, a daily cron job nobody
 * works, and runs due in the next minutes.
 */
import { NonRetryableError, type TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from './e2e.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from './redis.js';

export const SHARDS = 4;
export const MEMBER = 'console-e2e';
export const WORK_QUEUE = 'console-work';
export const CRON_QUEUE = 'console-cron';
export const LATER_QUEUE = 'console-later';
export const COMPLETED_ONE_SHOTS = 40;
export const LATER_RUNS = 3;
export const DEAD_ERROR = 'card declined (console fixture)';

export interface ConsoleFixture {
  db: TestDatabase;
  daemon: DaemonProcess;
  /** http://127.0.0.1:port/ */
  consoleUrl: string;
  client: TimelaneClient;
  worker: RecordingWorker;
  deadRunId: string;
  deadJobId: string;
  cronJobId: string;
  intervalJobId: string;
  completedRunIds: string[];
  stop(): Promise<void>;
}

export async function startConsoleFixture(): Promise<ConsoleFixture> {
  const db = await createTestDatabase(SHARDS);
  const prefix = redisPrefix();
  const daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', MEMBER, '--redis-prefix', prefix, '--console-address', '127.0.0.1:0'],
  });
  const started = daemon.logs.find((l) => l.msg === 'timelane daemon started');
  const consoleUrl = String(started?.console ?? '');
  if (!consoleUrl.startsWith('http://')) throw new Error(`the daemon logged no console URL: ${JSON.stringify(started)}`);
  const client = openClient(daemon.address);
  if (!(await waitForOwnedShards(client, SHARDS))) throw new Error('the daemon did not take its shards');
  const worker = collectRuns({
    address: daemon.address,
    queues: [WORK_QUEUE],
    handler: async (run) => {
      if (run.payload.toString() === 'fail') throw new NonRetryableError(DEAD_ERROR);
    },
  });

  const now = Date.now();
  // Spread over 3 s so the fires/s chart has a shape.
  const batch = await client.scheduleBatch(
    Array.from({ length: COMPLETED_ONE_SHOTS }, (_, i) => ({ queue: WORK_QUEUE, at: now + 500 + Math.round((3_000 * i) / COMPLETED_ONE_SHOTS), payload: { n: i } })),
  );
  const dead = await client.schedule({ queue: WORK_QUEUE, delayMs: 300, payload: 'fail', retry: { maxAttempts: 1 } });
  const interval = await client.scheduleRecurring({ queue: WORK_QUEUE, recurrence: { everyMs: 1_000 } });
  const cron = await client.scheduleRecurring({ queue: CRON_QUEUE, recurrence: { cron: '0 3 * * *', timeZone: 'Europe/Paris' } });
  for (let i = 0; i < LATER_RUNS; i++) await client.schedule({ queue: LATER_QUEUE, delayMs: 90_000 + i * 60_000, payload: { later: i } });

  const completedRunIds = batch.map((b) => b.run.id);
  const allDone = await worker.recorder.waitForAll([...completedRunIds, dead.run.id], 20_000);
  if (!allDone) throw new Error('the worker did not receive every seeded run');
  const deadListed = await waitUntil(async () => (await client.listDeadRuns({ queue: WORK_QUEUE })).runs.some((r) => r.id === dead.run.id), 10_000, 100);
  if (!deadListed) throw new Error('the failing run did not become a dead letter');
  const completed = await waitUntil(async () => (await client.listRuns({ queue: WORK_QUEUE, status: 'completed', pageSize: 1000 })).runs.length >= COMPLETED_ONE_SHOTS, 10_000, 100);
  if (!completed) throw new Error('the seeded runs were not all recorded completed');

  return {
    db,
    daemon,
    consoleUrl,
    client,
    worker,
    deadRunId: dead.run.id,
    deadJobId: dead.job.id,
    cronJobId: cron.job.id,
    intervalJobId: interval.job.id,
    completedRunIds,
    async stop() {
      await worker.close();
      closeClient(client);
      await stopDaemon(daemon);
      await deleteRedisPrefix(prefix);
      await db.drop();
    },
  };
}
