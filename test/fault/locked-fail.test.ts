/**
 * Fault: the rows of several fired runs are locked by transactions that do
 * not end (an operator's open psql sessions) when their workers fail them.
 * A Fail is written on the answer pool (four connections, shared with
 * Heartbeats, the expiry of closed streams and the hand-off record), and its
 * statement used to wait for the lock up to the statement bound (10 s),
 * retried twice: four such Fails held every connection, and every other
 * worker's Fail and Heartbeat waited behind them — leases running out, runs
 * redelivered — for as long as the locks lasted.
 *
 * Asserted: with five runs' rows locked and their Fails sent, a sixth run's
 * Fail is written within 5 s (before: not for 10 s and more; now ~1 s); the locked
 * runs stay fired while held, their Fails acked UNAVAILABLE (their workers
 * send them again), never INTERNAL nor refused; once the locks go, each is
 * failed once: one retry each, no run delivered twice before its retry.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AckInfo, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, holdRunRow, runStatuses, type HeldRow, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 4;
const QUEUE = 'locked-fail';
/** More than the answer pool's four connections. */
const LOCKED = 5;
/** The free run's Fail is written this soon, locks or not (before: after the 10 s statement bound; now the answer pool's 1 s lock bound). */
const WRITTEN_WITHIN_MS = 5_000;
const UNAVAILABLE = 14;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker | undefined;
const lockers: HeldRow<{ status: string }>[] = [];
const acks: AckInfo[] = [];
/** Run id → opens the gate its handler waits at before it fails the run. */
const gates = new Map<string, () => void>();
const gated = new Map<string, Promise<void>>();

function gateOf(runId: string): Promise<void> {
  let p = gated.get(runId);
  if (!p) {
    p = new Promise<void>((resolve) => gates.set(runId, resolve));
    gated.set(runId, p);
  }
  return p;
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'locked-fail'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({
    address: daemon.address,
    queues: [QUEUE],
    // First attempts wait for their gate, then fail (a retryable Fail); retries complete.
    handler: async (run) => {
      if (run.attempt > 1) return;
      await gateOf(run.runId);
      throw new Error(`failing run ${run.runId}`);
    },
    onAck: (a) => acks.push(a),
  });
});

afterAll(async () => {
  for (const open of gates.values()) open();
  for (const l of lockers) await l.end();
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

const statuses = (ids: readonly string[]): Promise<Map<string, string>> => runStatuses(db.pool, ids);

/** Attempts of the jobs of `ids` (the first, and any retry). */
async function attempts(ids: readonly string[]): Promise<number[]> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM timelane.runs WHERE job_id IN (SELECT job_id FROM timelane.runs WHERE id = ANY($1::int8[])) GROUP BY job_id ORDER BY job_id',
    [ids],
  );
  return rows.map((r) => r.n);
}

const acked = (id: string): AckInfo[] => acks.filter((a) => a.runId === id);

it("Fails of locked runs do not hold the answer pool: another run's Fail is written at once, and theirs once the locks go", async () => {
  const scheduled = await client.scheduleBatch(Array.from({ length: LOCKED + 1 }, () => ({ queue: QUEUE, at: Date.now() + 500, retry: { maxAttempts: 3, initialBackoffMs: 100 } })));
  const ids = scheduled.map((s) => s.run.id);
  const [free, ...locked] = ids;
  const recorder = worker!.recorder;
  expect(await recorder.waitForAll(ids, 10_000)).toBe(true);

  for (const id of locked) lockers.push(await holdRunRow(db.pool, id, 'status'));
  expect(lockers.map((l) => l.row?.status)).toEqual(locked.map(() => 'fired'));
  for (const id of locked) {
    void gateOf(id);
    gates.get(id)!(); // five Fails that meet a lock
  }
  // Let them reach Postgres and take the answer pool's connections.
  expect(await waitUntil(async () => (await lockWaits()) >= 4, 5_000)).toBe(true);

  const t0 = Date.now();
  void gateOf(free);
  gates.get(free)!();
  const freeWritten = await waitUntil(async () => (await statuses([free])).get(free) !== 'fired', WRITTEN_WITHIN_MS);
  const freeAfterMs = Date.now() - t0;
  const lockedWhileHeld = [...(await statuses(locked)).values()];
  // Their Fails are answered UNAVAILABLE while the locks last (the worker sends them again), never anything else.
  const toldToRetry = await waitUntil(() => locked.every((id) => acked(id).some((a) => a.code === UNAVAILABLE)), 5_000);

  for (const l of lockers) await l.commit();
  const lockedFailed = await waitUntil(async () => [...(await statuses(locked)).values()].every((s) => s !== 'fired'), 15_000);
  const retriesDone = await waitUntil(async () => (await attempts(ids)).every((n) => n === 2) && (await completedRetries(ids)) === ids.length, 10_000);

  expect({ freeWritten, freeAfterMs: freeAfterMs < WRITTEN_WITHIN_MS }).toEqual({ freeWritten: true, freeAfterMs: true });
  expect(lockedWhileHeld).toEqual(locked.map(() => 'fired'));
  expect(toldToRetry).toBe(true);
  expect({ lockedFailed, retriesDone }).toEqual({ lockedFailed: true, retriesDone: true });
  expect(acks.filter((a) => a.code !== 0 && a.code !== UNAVAILABLE)).toEqual([]);
  // Each first attempt failed once: one retry per job, each run delivered once.
  expect(await attempts(ids)).toEqual(ids.map(() => 2));
  expect(await waitUntil(() => ids.every((id) => acked(id).some((a) => a.code === 0)), 10_000)).toBe(true);
  expect(ids.map((id) => recorder.count(id))).toEqual(ids.map(() => 1));
});

/** Retries (second attempts) of the jobs of `ids` that completed. */
async function completedRetries(ids: readonly string[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM timelane.runs WHERE attempt = 2 AND status = 'completed' AND job_id IN (SELECT job_id FROM timelane.runs WHERE id = ANY($1::int8[]))",
    [ids],
  );
  return rows[0].n;
}

/** Backends of the test database waiting for a row lock. */
async function lockWaits(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  );
  return rows[0].n;
}
