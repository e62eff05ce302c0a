/**
 * End to end: staging. A worker that subscribes with stage_ahead_ms is
 * handed each run the daemon has claimed ahead of its due time at once, with
 * its start on the daemon's clock (start_mono_ms), and starts it then; the daemon's timer and the
 * network are off the path to the handler.
 *
 * Asserted, against a real daemon over real gRPC and Postgres:
 * - staged runs reach their handler at or after their due time, never
 *   before, each exactly once, and Postgres records them as fired at their
 *   due time; a worker that does not stage gets its runs when due;
 * - a run cancelled while staged never reaches its handler, and ends cancelled;
 * - a stream cut while an at-least-once run is staged: the worker drops it,
 *   the daemon hands it out again, and it runs exactly once, not before due;
 * - an at-most-once run is not staged (a worker dying with it held would
 *   lose it): even a staging worker gets it from the daemon at its due time.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createWorker, type DeliveredRunInfo, type TimelaneClient, type Worker } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { chunks, closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 4;
/** A lone run is claimed 500–1,000 ms before due: long enough to act on it while its worker holds it. */
const CLAIM_AHEAD_MS = 1_000;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let proxy: TcpProxy | undefined;
let client: TimelaneClient;
const workers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    args: ['--member-id', 'staging', '--claim-ahead-ms', String(CLAIM_AHEAD_MS), '--reap-interval-ms', '200'],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  proxy = await TcpProxy.start(daemon.address);
});

afterAll(async () => {
  for (const w of workers) await w.close();
  closeClient(client);
  await stopDaemon(daemon);
  await proxy?.close();
  await db?.drop();
});

function recording(queue: string, stageAheadMs: number): RecordingWorker {
  const w = collectRuns({ address: daemon!.address, queues: [queue], stageAheadMs });
  workers.push(w);
  return w;
}

/** A worker through the proxy whose handler records each start (Date.now()). */
function proxied(queue: string): { worker: Worker; starts: { run: DeliveredRunInfo; at: number }[] } {
  const starts: { run: DeliveredRunInfo; at: number }[] = [];
  const worker = createWorker({
    address: `127.0.0.1:${proxy!.port}`,
    queues: [queue],
    concurrency: 10,
    stageAheadMs: 1_000,
    reconnectInitialMs: 50,
    reconnectMaxMs: 200,
    onError: () => undefined, // the cut stream's error
    handler: (run) => void starts.push({ run, at: Date.now() }),
  });
  track(worker, 'staging worker (proxied)');
  workers.push({ close: () => worker.close(2_000).then(() => untrack(worker)) });
  return { worker, starts };
}

it('staged runs start at their due time, never before, once each; fired_at is the due time; a worker that does not stage gets them when due', async () => {
  const staged = recording('staging-bulk', 1_000);
  const plain = recording('staging-plain', 0);
  const t0 = Date.now() + 3_000;
  const dues = Array.from({ length: 300 }, (_, i) => t0 + Math.floor(i * 5));
  const ids: string[] = [];
  const plainIds: string[] = [];
  for (const part of chunks(dues, 100)) {
    const res = await client.scheduleBatch(part.map((at) => ({ queue: 'staging-bulk', at })));
    ids.push(...res.map((r) => r.run.id));
  }
  const res = await client.scheduleBatch(dues.slice(0, 50).map((at) => ({ queue: 'staging-plain', at })));
  plainIds.push(...res.map((r) => r.run.id));

  expect(await staged.recorder.waitForAll(ids, 15_000)).toBe(true);
  expect(await plain.recorder.waitForAll(plainIds, 15_000)).toBe(true);
  expect(staged.recorder.duplicates()).toEqual([]);
  for (const r of staged.recorder.receipts) {
    // Never early: Date.now() at the handler has reached the due time.
    expect(r.receivedAt).toBeGreaterThanOrEqual(r.run.dueAtMs);
    expect(r.run.receivedAtMs).toBeGreaterThanOrEqual(r.run.dueAtMs - 1); // the library's sub-ms clock, within its ±1 ms
  }
  // Handed over ahead: arrived before due and held (a loaded machine may have a few arrive late).
  const ahead = staged.recorder.receipts.filter((r) => r.run.arrivedAtMs < r.run.dueAtMs && r.run.startInMs > 0 && r.run.firedAtMs === r.run.dueAtMs);
  expect(ahead.length).toBeGreaterThan(ids.length * 0.9);
  // Postgres: fired at the due time (a staged run is released to its worker then).
  const { rows } = await db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM runs WHERE id = ANY($1::int8[]) AND status = 'completed' AND fired_at = due_at AND lag_ms = 0`,
    [ids],
  );
  expect(Number(rows[0].n)).toBeGreaterThan(ids.length * 0.9);
  // Not staging: every run arrives when due, with no hold.
  for (const r of plain.recorder.receipts) {
    expect(r.run.startInMs).toBe(0);
    expect(r.run.arrivedAtMs).toBeGreaterThanOrEqual(r.run.dueAtMs - 1);
    expect(r.receivedAt).toBeGreaterThanOrEqual(r.run.dueAtMs);
  }
});

/** Schedules a run due in 2.5 s and resolves once the worker holds it, well before due (another try if the machine was too slow). */
async function stagedRun(worker: Worker, starts: unknown[], queue: string, delivery: 'at_least_once' | 'at_most_once' = 'at_least_once') {
  for (let attempt = 1; ; attempt++) {
    const received = worker.stats.received;
    const dueAt = Date.now() + 2_500;
    const { job, run } = await client.schedule({ queue, at: dueAt, delivery });
    const held = await waitUntil(() => worker.stats.received > received, 2_000, 5);
    if (held && starts.length === 0 && Date.now() < dueAt - 300) return { job, run, dueAt };
    if (attempt >= 5) throw new Error('never caught a run staged at the worker well before its due time');
    await waitUntil(() => Date.now() > dueAt + 200, 3_000);
    starts.length = 0;
  }
}

it('a run cancelled while its worker holds it never starts, and ends cancelled', async () => {
  const { worker, starts } = proxied('staging-cancel');
  const { job, run, dueAt } = await stagedRun(worker, starts, 'staging-cancel');
  await client.cancelJob(job.id);
  expect(await waitUntil(async () => (await runStatuses(db.pool, [run.id])).get(run.id) === 'cancelled', 10_000, 20)).toBe(true);
  await waitUntil(() => Date.now() > dueAt + 500, 5_000);
  expect(starts.filter((s) => s.run.runId === run.id)).toEqual([]);
});

it('a stream cut while an at-least-once run is held: the worker drops it, the daemon hands it out again, it runs once, not before due', async () => {
  const { worker, starts } = proxied('staging-cut');
  const { run, dueAt } = await stagedRun(worker, starts, 'staging-cut');
  expect(proxy!.cutAll()).toBeGreaterThan(0);
  expect(await waitUntil(() => starts.some((s) => s.run.runId === run.id), 10_000, 10)).toBe(true);
  expect(await waitUntil(async () => (await runStatuses(db.pool, [run.id])).get(run.id) === 'completed', 10_000, 20)).toBe(true);
  const mine = starts.filter((s) => s.run.runId === run.id);
  expect(mine).toHaveLength(1);
  expect(mine[0].at).toBeGreaterThanOrEqual(dueAt);
  // The copy that ran is the daemon's second hand-out: the first was dropped with its stream.
  expect(mine[0].run.delivery).toBe(2);
});

it('an at-most-once run is not staged: a staging worker gets it from the daemon at its due time', async () => {
  const { worker, starts } = proxied('staging-amo');
  const dueAt = Date.now() + 1_500;
  const { run } = await client.schedule({ queue: 'staging-amo', at: dueAt, delivery: 'at_most_once' });
  expect(await waitUntil(() => starts.some((s) => s.run.runId === run.id), 10_000, 5)).toBe(true);
  const [got] = starts.filter((s) => s.run.runId === run.id);
  expect(got.run.startInMs).toBe(0);
  expect(got.run.arrivedAtMs).toBeGreaterThanOrEqual(dueAt - 1); // handed over at due, not ahead (the library's clock: ±1 ms)
  expect(got.at).toBeGreaterThanOrEqual(dueAt);
  expect(worker.stats.received).toBeGreaterThanOrEqual(1);
});
