/**
 * Fault: a fired run's row is locked by a transaction that does not end (an
 * operator's open psql transaction, a session gone silent in the middle of a
 * CancelJob) just as its worker completes it. The Complete must not wait on
 * that lock: Completes are written in batches, and one batch waiting for the
 * lock held back every Complete written with it — their acks, and their runs
 * stayed fired (leases running out, redeliveries) for as long as the lock
 * lasted, or until the statement bound failed the whole batch.
 *
 * The daemon's own record of hand-offs (the `fired_at` of deliveries
 * unanswered for a second) must not wait on the lock either: it locks its
 * runs in id order, and waiting on the last one it held the locks of all the
 * others — whose Completes, skipping locked rows, then waited with it.
 *
 * Asserted: while the lock is held, the others' hand-off times are recorded
 * (their workers take over a second), and their Completes are written
 * (committed); the locked run stays fired and its Complete is neither refused
 * nor written through the lock; once the lock is gone, it is written. Every
 * Complete is acknowledged once, OK (the client sends the 20 in one
 * CompleteBatch, whose acks come back together, in one AckBatch, when the
 * last is written), and no run is delivered twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AckInfo, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, holdRunRow, runStatuses, type HeldRow, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 4;
const QUEUE = 'locked-answer';
const RUNS = 20;
/** "At once" for the others' Completes: far under the hold (before: only once the lock went). */
const WRITTEN_WITHIN_MS = 1_500;
/** How long the lock is held after the others were written. */
const HOLD_MS = 1_000;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker | undefined;
let locker: HeldRow<{ status: string; recorded: boolean }> | undefined;
const acks: AckInfo[] = [];
let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (openGate = resolve));

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'locked-answer'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  // Every handler waits for the gate: the row is locked after the run fired, before its Complete.
  worker = collectRuns({ address: daemon.address, queues: [QUEUE], handler: () => gate, onAck: (a) => acks.push(a) });
});

afterAll(async () => {
  openGate();
  await locker?.end();
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

const statuses = (ids: readonly string[]): Promise<Map<string, string>> => runStatuses(db.pool, ids);

/** How many of `ids` have no hand-off time (fired_at) recorded yet. */
async function unrecorded(ids: readonly string[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM timelane.runs WHERE id = ANY($1::int8[]) AND fired_at IS NULL', [ids]);
  return rows[0].n;
}

const acked = (id: string): AckInfo[] => acks.filter((a) => a.runId === id);

it("a locked run's Complete does not hold back the Completes written with it, and is written once the lock is gone", async () => {
  const scheduled = await client.scheduleBatch(Array.from({ length: RUNS }, () => ({ queue: QUEUE, at: Date.now() + 500 })));
  const ids = scheduled.map((s) => s.run.id);
  // The highest id: the hand-off record locks in id order, so it would reach this row holding all the others.
  const locked = [...ids].sort((a, b) => Number(a) - Number(b)).at(-1)!;
  const others = ids.filter((id) => id !== locked);
  const recorder = worker!.recorder;
  expect(await recorder.waitForAll(ids, 10_000)).toBe(true);

  locker = await holdRunRow(db.pool, locked, 'status, fired_at IS NOT NULL AS recorded');
  // Locked before its hand-off time was recorded: the record must meet the lock.
  expect(locker.row).toEqual({ status: 'fired', recorded: false });

  // Handed out over a second ago and not answered: the daemon records their hand-off times (every 500 ms).
  const handOffsRecorded = await waitUntil(async () => (await unrecorded(others)) === 0, WRITTEN_WITHIN_MS + 1_000);
  openGate(); // every handler returns: 20 Completes, gathered into one batch
  const othersWritten = await waitUntil(async () => [...(await statuses(others)).values()].every((s) => s === 'completed'), WRITTEN_WITHIN_MS);
  await sleep(HOLD_MS);
  const lockedWhileHeld = { status: (await statuses([locked])).get(locked), acks: acked(locked) };

  await locker.commit();
  const lockedWritten = await waitUntil(async () => (await statuses([locked])).get(locked) === 'completed', 5_000);
  expect(await unrecorded([locked])).toBe(0); // its hand-off time written once the lock went
  const allAcked = await waitUntil(() => ids.every((id) => acked(id).length > 0), 5_000);

  expect({ handOffsRecorded, othersWritten }).toEqual({ handOffsRecorded: true, othersWritten: true });
  // Not refused as superseded while it waited, nor written through the lock.
  expect(lockedWhileHeld).toEqual({ status: 'fired', acks: [] });
  expect({ lockedWritten, allAcked }).toEqual({ lockedWritten: true, allAcked: true });
  expect(acks.filter((a) => a.code !== 0)).toEqual([]);
  expect(ids.map((id) => acked(id).length)).toEqual(ids.map(() => 1));
  expect(recorder.duplicates()).toEqual([]);
  expect(ids.map((id) => recorder.count(id))).toEqual(ids.map(() => 1));
});
