/**
 * End to end: a run cancelled while it waits in the worker library's
 * backlog never runs. The backlog holds runs beyond `concurrency`, which
 * happens after a reconnect while a handler from the old stream still runs:
 * here the worker's connection is cut (a TCP proxy between worker and
 * daemon) while an at-most-once run's handler holds the only slot; the
 * new stream then gets a second run, which waits. CancelJob on that run
 * sends CancelRun, which the library applied only to running handlers:
 * the run then ran as soon as the slot was free, after its cancel.
 *
 * Asserted: the cancelled run's handler never starts, it ends `cancelled`,
 * and the first run still completes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, type TimelaneClient, type Worker } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { closeClient, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const SHARDS = 2;
const QUEUE = 'cancel-backlog';

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let proxy: TcpProxy | undefined;
let client: TimelaneClient;
let worker: Worker | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'cancel-backlog'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  proxy = await TcpProxy.start(daemon.address);
});

afterAll(async () => {
  await worker?.close(2_000);
  closeClient(client);
  await stopDaemon(daemon);
  await proxy?.close();
  await db?.drop();
});

it('a run cancelled while it waits in the worker backlog never runs, and ends cancelled', async () => {
  const started: string[] = [];
  let releaseFirst: () => void = () => undefined;
  const firstMayEnd = new Promise<void>((resolve) => (releaseFirst = resolve));
  worker = createWorker({
    address: `127.0.0.1:${proxy!.port}`,
    queues: [QUEUE],
    concurrency: 1,
    reconnectInitialMs: 50,
    reconnectMaxMs: 200,
    onError: () => undefined, // the cut stream's error
    handler: async (run) => {
      started.push(run.runId);
      if (started.length === 1) await firstMayEnd;
    },
  });

  // At most once: not handed out again when its stream goes, so the new stream's credit is free for the second run.
  const first = await client.schedule({ queue: QUEUE, delivery: 'at_most_once' });
  expect(await waitUntil(() => started.length === 1, 10_000, 10)).toBe(true);
  proxy!.cutAll();

  const second = await client.schedule({ queue: QUEUE });
  // Delivered on the new stream while the first handler holds the only slot: it waits in the backlog.
  expect(await waitUntil(() => worker!.stats.received === 2, 10_000, 10)).toBe(true);
  expect(started).toEqual([first.run.id]);
  await client.cancelJob(second.job.id);
  expect(await waitUntil(async () => (await runStatuses(db.pool, [second.run.id])).get(second.run.id) === 'cancelled', 10_000, 20)).toBe(true);

  releaseFirst();
  // The slot frees as the first handler's answer is sent: a backlog run would start then, before that answer is recorded.
  expect(await waitUntil(async () => (await runStatuses(db.pool, [first.run.id])).get(first.run.id) === 'completed', 10_000, 20)).toBe(true);
  // Before: the cancelled run started here.
  expect(started).toEqual([first.run.id]);
  expect((await runStatuses(db.pool, [second.run.id])).get(second.run.id)).toBe('cancelled');
});
