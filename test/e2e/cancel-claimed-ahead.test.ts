/**
 * End to end: "a cancel before the fire means it never fires" holds for a
 * run already claimed ahead of its due time. With claim-ahead the run is
 * `fired` in Postgres (claimed) while the daemon holds it in its release
 * gate until it is due; CancelJob then marks it and asks the daemon to stop
 * it, but only the worker streams were asked — the gate released it at its
 * due time and a worker ran it to completion.
 *
 * Asserted: a run cancelled while it waits in the gate never reaches the
 * worker, and ends cancelled.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 2;
const QUEUE = 'cancel-claimed-ahead';
/** The longest claim-ahead: a lone run is claimed about half of it (500 ms) before due, and waits in the gate until then. */
const CLAIM_AHEAD_MS = 1_000;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    args: ['--member-id', 'cancel-claimed-ahead', '--claim-ahead-ms', String(CLAIM_AHEAD_MS), '--reap-interval-ms', '200'],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({ address: daemon.address, queues: [QUEUE] });
});

afterAll(async () => {
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

/** Schedules a run and cancels it once it is claimed, still before its due time; another try if a loaded machine missed that window. */
async function cancelClaimedAhead(): Promise<{ runId: string; dueAt: number }> {
  for (let attempt = 1; ; attempt++) {
    const dueAt = Date.now() + 2_500;
    const { job, run } = await client.schedule({ queue: QUEUE, at: dueAt });
    // Claimed ahead: fired in Postgres, held by the daemon until due.
    const claimed = await waitUntil(async () => (await runStatuses(db.pool, [run.id])).get(run.id) === 'fired', dueAt - Date.now(), 10);
    if (claimed && Date.now() < dueAt - 150) {
      await client.cancelJob(job.id);
      if (Date.now() < dueAt - 20) return { runId: run.id, dueAt };
    }
    if (attempt >= 5) throw new Error('never caught a run between its claim and its due time');
  }
}

it('a run cancelled after its claim, before its due time, never reaches a worker and ends cancelled', async () => {
  const { runId, dueAt } = await cancelClaimedAhead();
  const run = { id: runId };

  await sleep(Math.max(0, dueAt - Date.now()) + 1_000);
  // Before: delivered at its due time, and completed.
  expect(worker!.recorder.count(run.id)).toBe(0);
  expect(await waitUntil(async () => (await runStatuses(db.pool, [run.id])).get(run.id) === 'cancelled', 5_000)).toBe(true);
});
