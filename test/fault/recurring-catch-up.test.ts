/**
 * Fault: every daemon stopped for a while, then started again. Two interval
 * jobs (every second) with a 3 s catch-up window: one `fire_all`, one
 * `fire_once`. The only daemon is stopped for ~14 s, then a new daemon
 * starts on the same database. Occurrences the first daemon had already made
 * into runs (about a window ahead) are runs and simply fire;
 * the catch-up rule decides about those made after the outage. Counted per job, over the outage:
 * fire_all fires the occurrences of the last 3 s and records the older ones
 * as missed; fire_once fires one run for all of them; nothing is dropped
 * silently (missed + caught up + fired covers every occurrence).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import type { TimelaneClient } from '@timelane/client';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 2;
// A 2 s window: the stopped daemon made occurrences about a window ahead; 6 s
// leaves a margin for passes during its graceful stop.
const MADE_AHEAD_MS = 6_000;
/** OCCURRENCE_LATE_AFTER_MS in daemon/recurring/recurrence.ts. */
const LATE_TOLERANCE_MS = 1_000;
const ARGS = ['--window-ms', '2000', '--load-interval-ms', '250', '--lease-ttl-ms', '1000'];

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient | undefined;
let worker: RecordingWorker | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
});

afterAll(async () => {
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

async function up(): Promise<void> {
  daemon = await startDaemon({ databaseUrl: db.url, args: ARGS });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({ address: daemon.address, queues: ['catch-all', 'catch-once'], concurrency: 100 });
}

async function down(): Promise<void> {
  await worker?.close();
  worker = undefined;
  closeClient(client);
  client = undefined;
  await stopDaemon(daemon);
  daemon = undefined;
}

describe('fault: every daemon stopped, then started again', () => {
  it('occurrences inside the catch-up window fire (all, or once); older ones are missed and counted', async () => {
    await up();
    const all = await client!.scheduleRecurring({ queue: 'catch-all', recurrence: { everyMs: 1_000, overlap: 'allow_all', catchUp: { windowMs: 3_000, mode: 'fire_all' } } });
    const once = await client!.scheduleRecurring({ queue: 'catch-once', recurrence: { everyMs: 1_000, overlap: 'allow_all', catchUp: { windowMs: 3_000, mode: 'fire_once' } } });
    await new Promise((r) => setTimeout(r, 2_500));
    await down();
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 14_000)); // nothing runs: every daemon is down
    const restartAt = Date.now();
    await up();
    // The new daemon's materialiser finds both jobs overdue by ~6 s.
    const c = client!;
    expect(await waitUntil(async () => (await c.getJob(all.job.id)).counts !== null && (await c.getJob(all.job.id)).counts!.missed > 0, 10_000)).toBe(true);
    expect(await waitUntil(async () => (await c.getJob(once.job.id)).counts!.missed > 0, 10_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1_000));

    const runs = async (jobId: string) => (await c.listRuns({ jobId, pageSize: 1000 })).runs;
    // The new daemon judged an occurrence overdue by its own clock, at its pass:
    // overdue ⇔ nominal < pass − 1 s (the lateness tolerance). The daemon logs
    // that pass's clock with the jobs that missed occurrences.
    const passAt = (jobId: string): number => {
      const line = daemon!.logs.find((l) => l.msg?.startsWith('recurring occurrences missed') && Array.isArray(l.jobs) && l.jobs.includes(jobId));
      expect(typeof line?.atMs, `a "missed" log line names job ${jobId}`).toBe('number');
      return line!.atMs as number;
    };
    for (const [job, mode] of [
      [all, 'fire_all'],
      [once, 'fire_once'],
    ] as const) {
      const overdueBefore = passAt(job.job.id) - LATE_TOLERANCE_MS;
      expect(overdueBefore).toBeGreaterThan(restartAt - 1_000);
      // Not made before the stop, judged overdue by the new daemon.
      const inOutage = (ms: number) => ms > stoppedAt + MADE_AHEAD_MS + 200 && ms < overdueBefore;
      const rs = (await runs(job.job.id)).filter((r) => inOutage(r.nominalAtMs));
      const missed = rs.filter((r) => r.status === 'missed');
      const fired = rs.filter((r) => r.status !== 'missed');
      const expected = Math.floor((overdueBefore - (stoppedAt + MADE_AHEAD_MS + 200)) / 1_000); // occurrences in that span, ±1
      expect(missed.length + fired.length, `${mode}: every occurrence of the outage is accounted for`).toBeGreaterThanOrEqual(expected - 1);
      if (mode === 'fire_all') {
        // Overdue, but by at most the 3 s window: nominal in [pass − 3 s, pass − 1 s), two of a per-second job.
        expect(fired.length).toBe(2);
        expect(Math.max(...missed.map((r) => r.nominalAtMs))).toBeLessThan(Math.min(...fired.map((r) => r.nominalAtMs)));
      } else {
        expect(fired).toHaveLength(1);
        expect(fired[0].nominalAtMs).toBeGreaterThan(Math.max(...missed.map((r) => r.nominalAtMs)));
      }
      expect(missed.length).toBeGreaterThanOrEqual(2);
      const { counts } = await c.getJob(job.job.id);
      expect(counts!.missed).toBeGreaterThanOrEqual(missed.length);
      // The caught-up runs reach the worker of the restarted daemon, late by the outage.
      const w = worker!;
      expect(await waitUntil(() => fired.every((r) => w.recorder.byRun.has(r.id)), 5_000)).toBe(true);
      for (const r of fired) expect(w.recorder.byRun.get(r.id)![0].receivedAt).toBeGreaterThanOrEqual(restartAt);
    }
  });
});
