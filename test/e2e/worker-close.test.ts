/**
 * End to end: a worker's graceful close under load. A busy worker answered
 * each run, which freed its stream's credit, and the daemon sent it another:
 * it never became idle, so close() waited its whole timeout, then aborted
 * the handlers still running and dropped their answers — those runs were
 * handed out again and run twice. The closing worker now sends Drain first:
 * the daemon sends it no more runs, it finishes what it holds and answers.
 *
 * Asserted, with runs coming due faster than the worker finishes them: close
 * resolves well before its timeout, no handler's signal fired, every run it
 * started is completed in Postgres, and a second worker then gets every
 * other run — each run handled exactly once.
 *
 * And a process whose handler ignores its signal exits once close() gave up
 * on it: its heartbeat timer (heartbeatEveryMs) kept it alive for ever.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, runStatuses, type TestDatabase } from '../helpers/db.js';
import { seeded } from '../helpers/seeded-random.js';
import { chunks, closeClient, collectRuns, openClient, RunRecorder, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 4;
const QUEUE = 'close-drain';
const RUNS = 2_000;
/** Due over 5 s: 400 a second, more than the closing worker finishes (8 at a time, 5–80 ms each). */
const SPREAD_MS = 5_000;
const CLOSE_TIMEOUT_MS = 5_000;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
const workers: RecordingWorker[] = [];

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'worker-close'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  for (const w of workers) await w.close();
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

it('a busy worker closes at once: it is sent no more runs, answers what it holds, and no run is handled twice', async () => {
  const recorder = new RunRecorder();
  const random = seeded(6);
  let aborted = 0;
  const first = collectRuns({
    address: daemon!.address,
    queues: [QUEUE],
    concurrency: 8,
    recorder,
    // Handlers of random lengths (as in service): they seldom all end in one moment.
    handler: async (_run, ctx) => {
      await sleep(5 + Math.floor(random() * 76));
      if (ctx.signal.aborted) aborted++;
    },
  });
  workers.push(first);
  const t0 = Date.now() + 500;
  const ids: string[] = [];
  for (const part of chunks(Array.from({ length: RUNS }, (_, i) => t0 + Math.floor((i * SPREAD_MS) / RUNS)), 500))
    ids.push(...(await client.scheduleBatch(part.map((at) => ({ queue: QUEUE, at })))).map((s) => s.run.id));
  // Busy: runs wait for it.
  expect(await waitUntil(() => recorder.distinct >= 50, 10_000)).toBe(true);

  const closing = Date.now();
  await first.worker.close(CLOSE_TIMEOUT_MS);
  const closeMs = Date.now() - closing;
  const handledByFirst = [...recorder.byRun.keys()];

  // Before: the whole timeout (a run came for every answer), then aborted handlers.
  expect({ closeMs: closeMs < CLOSE_TIMEOUT_MS / 2, aborted }).toEqual({ closeMs: true, aborted: 0 });
  // Its last Completes are acked within a Complete batch's 5 ms gather: wait for them, not for a fixed time.
  const allCompleted = async (ids: readonly string[]): Promise<boolean> => [...(await runStatuses(db.pool, ids)).values()].every((s) => s === 'completed');
  expect(await waitUntil(() => allCompleted(handledByFirst), 5_000)).toBe(true);

  const second = collectRuns({ address: daemon!.address, queues: [QUEUE], concurrency: 200, recorder });
  workers.push(second);
  expect(await waitUntil(() => allCompleted(ids), 30_000)).toBe(true);
  expect(ids.filter((id) => recorder.count(id) !== 1)).toEqual([]);
});

/** Runs a worker script (ES module; argv[1] is the daemon's address) in a process of its own; 'still running' if it has not exited within `withinMs` (then it is killed). */
async function runWorkerProcess(script: string, withinMs: number): Promise<{ out: string; code: number | null | 'still running' }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, daemon!.address], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const code = await Promise.race([exited, sleep(withinMs).then(() => 'still running' as const)]);
  if (code === 'still running') child.kill('SIGKILL');
  return { out, code };
}

it('a process whose handler ignores its signal exits after close() gives up on it (its heartbeat timer stops)', async () => {
  // A user's worker process: one run, a handler that never settles, close(100), nothing else left.
  const script = `
    import { TimelaneClient, createWorker } from '@timelane/client';
    const address = process.argv[1];
    const client = new TimelaneClient(address);
    const worker = createWorker({
      address, queues: ['close-stuck'], concurrency: 1, heartbeatEveryMs: 20,
      handler: () => { setTimeout(async () => { await worker.close(100); client.close(); process.stdout.write('closed\\n'); }, 50); return new Promise(() => {}); },
    });
    await client.schedule({ queue: 'close-stuck', delayMs: 100 });
  `;
  const { out, code } = await runWorkerProcess(script, 10_000);
  // Before: still running (the heartbeat interval of the abandoned handler fired for ever).
  expect({ out, code }).toEqual({ out: 'closed\n', code: 0 });
});

it('a process exits as soon as close() has its answers acked, not at close()’s timeout', async () => {
  // A user's worker process: one run completed, then close(30000) as a SIGTERM handler would call it.
  const script = `
    import { TimelaneClient, createWorker } from '@timelane/client';
    const address = process.argv[1];
    const client = new TimelaneClient(address);
    const worker = createWorker({
      address, queues: ['close-prompt'], concurrency: 1,
      handler: () => { setTimeout(async () => { await worker.close(30000); client.close(); process.stdout.write('closed\\n'); }, 0); },
    });
    await client.schedule({ queue: 'close-prompt', delayMs: 100 });
  `;
  const { out, code } = await runWorkerProcess(script, 15_000);
  // With a timer left armed for the rest of close()'s 30 s, it was still running here.
  expect({ out, code }).toEqual({ out: 'closed\n', code: 0 });
});
