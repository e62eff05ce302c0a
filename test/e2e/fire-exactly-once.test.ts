/**
 * End to end: one daemon (child process), one worker, thousands of runs due
 * over a few seconds. Every run reaches the worker exactly once, never
 * before its due time and (loosely) within a second of it; GetRun shows the
 * sampled runs completed. Once with Redis leases, once with Postgres leases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScheduleInput, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import {
  chunks,
  closeClient,
  collectRuns,
  daemonProblems,
  openClient,
  percentile,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 16;
/** Loose: the machine may be slow; the point is "fired near its time", not a benchmark. */
const MAX_LAG_MS = 1_000;

interface Backend {
  name: string;
  count: number;
  redis: boolean;
}

const BACKENDS: Backend[] = [
  { name: 'redis leases', count: 2_000, redis: true },
  { name: 'postgres leases', count: 300, redis: false },
];

describe.each(BACKENDS)('fire exactly once ($name)', ({ count, redis }) => {
  let db: TestDatabase;
  let prefix = '';
  let daemon: DaemonProcess | undefined;
  let client: TimelaneClient | undefined;
  let worker: RecordingWorker | undefined;
  const queue = `fire-once-${redis ? 'redis' : 'pg'}`;

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    prefix = redisPrefix();
    daemon = await startDaemon({
      databaseUrl: db.url,
      redisUrl: redis ? TEST_REDIS_URL : undefined,
      args: ['--member-id', `fire-once-${redis ? 'r' : 'p'}`, ...(redis ? ['--redis-prefix', prefix] : [])],
    });
    client = openClient(daemon.address);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    worker = collectRuns({ address: daemon.address, queues: [queue], concurrency: 2_000 });
  });

  afterAll(async () => {
    await worker?.close();
    closeClient(client);
    await stopDaemon(daemon);
    if (redis) await deleteRedisPrefix(prefix);
    await db?.drop();
  });

  it(`fires ${count} runs spread over 5 s, each exactly once, never early`, async () => {
    const c = client!;
    const rec = worker!.recorder;
    const start = Date.now() + 1_500;
    const spreadMs = 5_000;
    const inputs: ScheduleInput[] = Array.from({ length: count }, (_, i) => ({
      queue,
      at: start + Math.floor((i * spreadMs) / count),
      payload: { i },
    }));
    const t0 = Date.now();
    // Batches go concurrently; a run can only be expected once its batch committed (a slow machine
    // may take longer than the lead time), so lateness is measured from max(due, batch acknowledged).
    const batches = await Promise.all(
      chunks(inputs, 1_000).map(async (batch) => ({ results: await c.scheduleBatch(batch), ackedAt: Date.now() })),
    );
    const results = batches.flatMap((b) => b.results);
    const ackedAtOf = new Map(batches.flatMap((b) => b.results.map((r) => [r.run.id, b.ackedAt] as const)));
    const scheduleMs = Date.now() - t0;
    expect(results).toHaveLength(count);
    const dueOf = new Map(results.map((r) => [r.run.id, r.run.dueAtMs]));
    expect(dueOf.size).toBe(count);
    results.forEach((r, i) => expect(r.run.dueAtMs).toBe(inputs[i].at));

    const all = await rec.waitFor((r) => r.distinct >= count, spreadMs + 1_500 + 15_000);
    // Give a duplicate time to show up.
    await sleep(1_500);
    expect(all, `received ${rec.distinct}/${count}`).toBe(true);

    const unknown = [...rec.byRun.keys()].filter((id) => !dueOf.has(id));
    expect(unknown).toEqual([]);
    const missing = [...dueOf.keys()].filter((id) => !rec.has(id));
    expect(missing).toEqual([]);
    expect(rec.duplicates()).toEqual([]);
    expect(rec.receipts).toHaveLength(count);

    const early: string[] = [];
    const late: string[] = [];
    const lags: number[] = [];
    for (const { run, receivedAt } of rec.receipts) {
      const due = dueOf.get(run.runId)!;
      expect(run.dueAtMs).toBe(due);
      expect(run.delivery).toBe(1);
      expect(run.attempt).toBe(1);
      const lag = receivedAt - due;
      lags.push(lag);
      if (receivedAt < due) early.push(`${run.runId} ${lag} ms`);
      const lateBy = receivedAt - Math.max(due, ackedAtOf.get(run.runId)!);
      if (lateBy > MAX_LAG_MS) late.push(`${run.runId} ${lateBy} ms`);
    }
    console.log(`[fire-exactly-once] ${count} runs: lag p50 ${percentile(lags, 50)} ms, p99 ${percentile(lags, 99)} ms, max ${Math.max(...lags)} ms; scheduling took ${scheduleMs} ms`);
    expect(early, 'runs received before their due time').toEqual([]);
    expect(late, `runs received more than ${MAX_LAG_MS} ms late (p50 ${percentile(lags, 50)}, p99 ${percentile(lags, 99)})`).toEqual([]);

    // GetRun on a sample: completed (the worker's Complete lands asynchronously).
    const sample = results.filter((_, i) => i % Math.ceil(count / 25) === 0).map((r) => r.run.id);
    const completed = await waitUntil(async () => {
      const runs = await Promise.all(sample.map((id) => c.getRun(id)));
      return runs.every((r) => r.status === 'completed');
    }, 10_000, 200);
    const runs = await Promise.all(sample.map((id) => c.getRun(id)));
    expect(completed, JSON.stringify(runs.filter((r) => r.status !== 'completed').slice(0, 3))).toBe(true);
    for (const r of runs) {
      expect(r.deliveries).toBe(1);
      expect(r.firedAtMs).toBeGreaterThanOrEqual(r.dueAtMs);
      expect(r.lagMs).toBeGreaterThanOrEqual(0);
      expect(r.fence).toBeGreaterThanOrEqual(1);
      expect(r.finishedAtMs).toBeGreaterThanOrEqual(r.firedAtMs);
    }
    expect(worker!.worker.stats.rejected).toBe(0);
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});
