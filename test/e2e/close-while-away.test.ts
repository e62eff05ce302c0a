/**
 * End to end: a worker closing while its daemon restarts still sends the
 * answers that found no stream. The daemon is killed (kill -9) while a
 * handler runs; the handler then finishes (its Complete waits for a
 * stream) and the worker is closed; the daemon comes back on the same
 * address. Before, close() resolved at once and dropped the Complete: the
 * run stayed `fired` until its lease ran out and was handed out again — its
 * handler ran twice.
 *
 * Asserted: when close() resolves, the run is `completed` in Postgres and
 * its handler ran once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, type Worker } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { closeClient, freePort, killDaemon, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';

const SHARDS = 2;
const QUEUE = 'close-while-away';

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let worker: Worker | undefined;
let port = 0;

const start = (): Promise<DaemonProcess> =>
  startDaemon({ databaseUrl: db.url, args: ['--member-id', 'close-while-away', '--grpc-address', `127.0.0.1:${port}`] });

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  port = await freePort();
  daemon = await start();
});

afterAll(async () => {
  await worker?.close(1_000);
  await stopDaemon(daemon);
  await db?.drop();
});

it('answers that found no stream are sent by close() once the daemon is back; the run completes, its handler ran once', async () => {
  const client = openClient(daemon!.address);
  try {
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    const started: string[] = [];
    let release: () => void = () => undefined;
    const mayEnd = new Promise<void>((resolve) => (release = resolve));
    worker = createWorker({
      address: `127.0.0.1:${port}`,
      queues: [QUEUE],
      concurrency: 1,
      reconnectInitialMs: 50,
      reconnectMaxMs: 200,
      onError: () => undefined, // the killed daemon's stream, and the refused reconnects
      handler: async (run) => {
        started.push(run.runId);
        await mayEnd;
      },
    });
    // A long lease: the run is not handed out again while the daemon is away.
    const { run } = await client.schedule({ queue: QUEUE, leaseMs: 60_000 });
    expect(await waitUntil(() => started.length === 1, 10_000, 10)).toBe(true);

    await killDaemon(daemon);
    daemon = undefined;
    release();
    // The handler is done: its Complete waits for a stream.
    expect(await waitUntil(() => worker!.stats.completed === 1, 5_000, 10)).toBe(true);
    const closed = worker.close(20_000);
    daemon = await start();
    await closed;
    // Before: close() resolved while the daemon was down, the Complete dropped; the run stayed fired.
    expect((await runStatuses(db.pool, [run.id])).get(run.id)).toBe('completed');
    expect(started).toEqual([run.id]);
  } finally {
    closeClient(client);
  }
});
