/**
 * End to end: the late answer of a superseded delivery must not abort the
 * run's current delivery on the same worker. A handler ran past its lease
 * (no heartbeat), the daemon handed the run out again to the same worker,
 * and then the first handler finished: its Complete was refused
 * (FAILED_PRECONDITION), and the worker library took that for "this
 * delivery was superseded" — aborting the only delivery of the run still
 * running, the current one. A handler that honours ctx.signal then threw,
 * and its retryable Fail spent an attempt for nothing.
 *
 * Asserted (the first delivery's last heartbeat and its Complete both
 * refused, as the acks name only the run): the second delivery's signal
 * never fires, it completes, and the run ends completed on its first
 * attempt (one run row for its job).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AckInfo, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 2;
const QUEUE = 'superseded-answer';
const LEASE_MS = 2_000;
const FAILED_PRECONDITION = 9;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'superseded-answer', '--reap-interval-ms', '100'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

it("a superseded delivery's refused Complete does not abort the run's current delivery", async () => {
  const acks: AckInfo[] = [];
  /** Per delivery number: whether its signal had fired when its handler ended. */
  const abortedAtEnd = new Map<number, boolean>();
  worker = collectRuns({
    address: daemon!.address,
    queues: [QUEUE],
    concurrency: 4,
    onAck: (a) => acks.push(a),
    handler: async (run, ctx) => {
      const refused = (): number => acks.filter((a) => a.runId === run.runId && a.code === FAILED_PRECONDITION).length;
      if (run.delivery === 1) {
        // Outlives its lease (no heartbeat) until the run is handed out again, here; then a
        // heartbeat and the Complete, both refused as superseded.
        await waitUntil(() => (worker?.recorder.count(run.runId) ?? 0) >= 2, 15_000, 20);
        ctx.heartbeat();
      } else {
        // Keeps its lease alive until both refusals of delivery 1 came back, then ends.
        while (refused() < 2 && !ctx.signal.aborted) {
          await sleep(300);
          ctx.heartbeat();
        }
      }
      abortedAtEnd.set(run.delivery, ctx.signal.aborted);
      if (ctx.signal.aborted) throw ctx.signal.reason;
    },
  });
  const { run } = await client.schedule({ queue: QUEUE, delayMs: 200, leaseMs: LEASE_MS, retry: { maxAttempts: 3 } });

  expect(await worker.recorder.waitFor((r) => r.count(run.id) >= 2, 10_000)).toBe(true);
  expect(worker.recorder.byRun.get(run.id)!.map((r) => r.run.delivery)).toEqual([1, 2]);
  // The first delivery's Complete is refused: it was superseded.
  expect(await waitUntil(() => acks.some((a) => a.runId === run.id && a.code === FAILED_PRECONDITION), 10_000)).toBe(true);
  expect(await waitUntil(() => abortedAtEnd.has(2), 10_000)).toBe(true);

  // Before: true — the refusal aborted delivery 2, which then failed (attempt 2 followed).
  expect(abortedAtEnd.get(2)).toBe(false);
  expect(await waitUntil(async () => (await runStatuses(db.pool, [run.id])).get(run.id) === 'completed', 10_000)).toBe(true);
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM timelane.runs WHERE job_id = (SELECT job_id FROM timelane.runs WHERE id = $1)', [run.id]);
  expect(rows[0].n).toBe(1);
});
