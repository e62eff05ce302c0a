/**
 * End to end: exactly-once effects (@timelane/client/exactly-once) while worker
 * processes die between COMMIT and their answer.
 *
 * One daemon (child process, real gRPC), "the user's Postgres" (a database
 * of its own, schema `shop`), and a fleet of worker processes
 * (fixtures/exactly-once-worker.mjs, credit 1 each) that a supervisor here
 * replaces whenever one is killed. Some runs' payload says `crash`: the
 * first worker to handle one bumps a balance, COMMITs, and SIGKILLs itself
 * before answering, so the daemon hands the run to another worker process
 * (same idempotency key, a higher delivery). Through exactlyOnce the balance ends at
 * exactly one per run; the same effect in a plain transaction (the naive
 * queue) is applied twice for every crashed run, which is what this test
 * would see without the helper.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSchema, exactlyOnce } from '@timelane/client/exactly-once';
import type { RunInfo, ScheduleInput, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { ADMIN_URL, createTestDatabase, uniqueName, type TestDatabase } from '../helpers/db.js';
import { closeClient, daemonProblems, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 4;
/** Runs per queue. */
const RUNS = 12;
/** Every CRASH_EVERY-th run (0, 4, 8) kills the first worker that handles it, after COMMIT. */
const CRASH_EVERY = 4;
const CRASHES = RUNS / CRASH_EVERY;
/** Short, so that even a redelivery that waits for the lease (not the stream's end) comes quickly. */
const LEASE_MS = 1_000;
/** Worker processes kept alive at once. */
const FLEET = 2;
const EFFECTS_TABLE = 'shop.timelane_effects';
const HELPER = 'eo-helper';
const NAIVE = 'eo-naive';
const RETRY = 'eo-retry';
const FIXTURE = fileURLToPath(new URL('./fixtures/exactly-once-worker.mjs', import.meta.url));

/** One line a worker process printed (see the fixture). */
interface WorkerEvent {
  worker: string;
  event: 'ready' | 'handled' | 'duplicate' | 'kill';
  queue?: string;
  runId?: string;
  delivery?: number;
  previousRunId?: string;
}

/**
 * Worker processes under a supervisor: one killed with SIGKILL is replaced
 * at once (as systemd or Kubernetes would), so FLEET streams stay open. Any
 * other exit is recorded and not replaced, so a broken worker fails the test
 * instead of looping.
 */
class WorkerFleet {
  readonly events: WorkerEvent[] = [];
  readonly exits: { worker: string; code: number | null; signal: NodeJS.Signals | null }[] = [];
  private readonly live = new Set<ChildProcess>();
  private stopping = false;
  private spawned = 0;
  private stderr = '';

  /** `before`: the fixture's arguments before the worker name; `queues`: after it. */
  constructor(
    private readonly before: string[],
    private readonly queues: string[],
  ) {}

  start(size: number): void {
    for (let i = 0; i < size; i++) this.spawn();
  }

  of(event: WorkerEvent['event'], queue?: string): WorkerEvent[] {
    return this.events.filter((e) => e.event === event && (queue === undefined || e.queue === queue));
  }

  get errors(): string {
    return this.stderr.slice(-4_000);
  }

  /** SIGTERM every live worker (graceful close), SIGKILL after 5 s; resolves when all exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.live].map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
            child.once('exit', () => clearTimeout(t));
            child.kill('SIGTERM');
          }),
      ),
    );
  }

  private spawn(): void {
    const worker = `eo-worker-${++this.spawned}`;
    const child = spawn(process.execPath, [FIXTURE, ...this.before, worker, ...this.queues], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child, `worker process ${worker}`);
    this.live.add(child);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as WorkerEvent);
      } catch {
        this.stderr += `${worker} stdout: ${line}\n`;
      }
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += `${worker}: ${d.toString()}`));
    child.once('exit', (code, signal) => {
      this.live.delete(child);
      untrack(child);
      this.exits.push({ worker, code, signal });
      if (!this.stopping && signal === 'SIGKILL') this.spawn();
    });
  }
}

let db: TestDatabase | undefined;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let fleet: WorkerFleet | undefined;
/** "The user's Postgres": a database the daemon knows nothing about. */
const appName = uniqueName('tl_app');
let app: pg.Pool | undefined;
/** Where workers mark the runs that already killed one of them. */
const markers = mkdtempSync(path.join(tmpdir(), 'timelane-eo-'));

function appUrl(): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${appName}`;
  return u.toString();
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  c.on('error', () => undefined); // a failed query rejects below; only an idle drop would be an uncaught event
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function balance(account: string): Promise<number> {
  const r = await app!.query<{ balance: number }>('SELECT balance FROM shop.accounts WHERE id = $1', [account]);
  return r.rows[0].balance;
}

async function runsOf(queue: string): Promise<RunInfo[]> {
  return (await client.listRuns({ queue, pageSize: 1_000 })).runs;
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  await admin(`CREATE DATABASE ${appName}`);
  app = track(new pg.Pool({ connectionString: appUrl(), max: 2 }), 'app database pool');
  // A pooled connection the server closes while idle is the pool's 'error' event; with no listener it is
  // an uncaught exception here (vitest: an unhandled error outside any test, as CI saw). afterAll invites
  // it: pg-pool's end() resolves before its clients' sockets close, so the DROP DATABASE ... WITH (FORCE)
  // that follows can terminate a backend still saying goodbye.
  app.on('error', (err) => console.warn(`[exactly-once] app pool: idle connection lost: ${err.message}`));
  await app.query(`
    CREATE SCHEMA shop;
    CREATE TABLE shop.accounts (id text PRIMARY KEY, balance int NOT NULL);
    INSERT INTO shop.accounts VALUES ('helper', 0), ('naive', 0), ('retry', 0);
    CREATE TABLE shop.naive_log (idempotency_key text NOT NULL, run_id text NOT NULL, delivery int NOT NULL);
  `);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'exactly-once', '--reap-interval-ms', '200'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  fleet = new WorkerFleet([daemon.address, appUrl(), EFFECTS_TABLE, markers], [HELPER, NAIVE, RETRY]);
  fleet.start(FLEET);
  // Each worker ran ensureSchema (concurrently: the advisory lock keeps them from racing).
  expect(await waitUntil(() => fleet!.of('ready').length === FLEET, 20_000), fleet.errors).toBe(true);
});

afterAll(async () => {
  await fleet?.stop();
  closeClient(client);
  await stopDaemon(daemon);
  if (app) {
    await app.end();
    untrack(app);
  }
  await admin(`DROP DATABASE IF EXISTS ${appName} WITH (FORCE)`);
  await db?.drop();
  rmSync(markers, { recursive: true, force: true });
});

describe('exactlyOnce with worker processes killed between COMMIT and the answer', () => {
  it(`applies the effect once per run (${RUNS} runs, ${CRASHES} SIGKILLs per queue); the naive handler applies it twice per crash`, async () => {
    const f = fleet!;
    const inputs = (queue: string): ScheduleInput[] =>
      Array.from({ length: RUNS }, (_, i) => ({ queue, delayMs: 0, leaseMs: LEASE_MS, payload: { crash: i % CRASH_EVERY === 0 } }));
    const schedule = (queue: string) => Promise.all(inputs(queue).map((input) => client.schedule(input)));
    const [helper, naive] = await Promise.all([schedule(HELPER), schedule(NAIVE)]);
    const crashIds = (scheduled: typeof helper) => new Set(scheduled.filter((_, i) => i % CRASH_EVERY === 0).map((s) => s.run.id));
    const helperCrashes = crashIds(helper);
    const naiveCrashes = crashIds(naive);

    const allCompleted = async () =>
      (await runsOf(HELPER)).filter((r) => r.status === 'completed').length === RUNS &&
      (await runsOf(NAIVE)).filter((r) => r.status === 'completed').length === RUNS;
    expect(await waitUntil(allCompleted, 90_000, 200), `worker stderr: ${f.errors}`).toBe(true);

    // The kills happened as planned: once per crash run, each worker replaced by a new process.
    const killed = f.of('kill').map((e) => e.runId);
    expect(new Set(killed)).toEqual(new Set([...helperCrashes, ...naiveCrashes]));
    expect(killed).toHaveLength(2 * CRASHES);
    expect(f.exits.filter((e) => e.signal === 'SIGKILL')).toHaveLength(2 * CRASHES);
    expect(f.exits.filter((e) => e.signal !== 'SIGKILL'), f.errors).toEqual([]);

    // Every run completed, on its first attempt; each crashed one after a redelivery.
    for (const queue of [HELPER, NAIVE]) {
      const runs = await runsOf(queue);
      expect(runs).toHaveLength(RUNS);
      expect(runs.map((r) => `${r.status}/${r.attempt}`)).toEqual(Array(RUNS).fill('completed/1'));
      for (const r of runs) if (helperCrashes.has(r.id) || naiveCrashes.has(r.id)) expect(r.deliveries, r.id).toBeGreaterThanOrEqual(2);
    }

    // With the helper: exactly one application per run, one effects row per key.
    const helperRuns = await runsOf(HELPER);
    expect(await balance('helper')).toBe(RUNS);
    const rows = await app!.query<{ idempotency_key: string; run_id: string; n: number }>(
      `SELECT idempotency_key, min(run_id) AS run_id, count(*)::int AS n FROM ${EFFECTS_TABLE} WHERE idempotency_key = ANY($1) GROUP BY idempotency_key`,
      [helperRuns.map((r) => r.idempotencyKey)],
    );
    expect(rows.rows).toHaveLength(RUNS);
    expect(rows.rows.every((r) => r.n === 1)).toBe(true);
    expect(new Map(rows.rows.map((r) => [r.idempotency_key, r.run_id]))).toEqual(new Map(helperRuns.map((r) => [r.idempotencyKey, r.id])));
    // ...and the redelivery of every crashed run found its key and did not apply it again. (On a slow
    // machine a run whose answer outlived its lease is redelivered and absorbed too: a superset is fine.)
    const duplicates = f.of('duplicate', HELPER);
    const absorbed = new Set(duplicates.map((d) => d.runId));
    for (const id of helperCrashes) expect(absorbed.has(id), `crashed run ${id} was not redelivered as a duplicate`).toBe(true);
    for (const d of duplicates) {
      expect(d.delivery).toBeGreaterThanOrEqual(2);
      expect(d.previousRunId).toBe(d.runId);
    }

    // Without it: every crashed run was applied again by its redelivery. This is the failure the helper prevents.
    const naiveBalance = await balance('naive');
    const log = await app!.query<{ idempotency_key: string; n: number }>(
      'SELECT idempotency_key, count(*)::int AS n FROM shop.naive_log GROUP BY idempotency_key',
    );
    const applications = log.rows.reduce((sum, r) => sum + r.n, 0);
    expect(naiveBalance).toBe(applications);
    expect(naiveBalance).toBeGreaterThanOrEqual(RUNS + CRASHES);
    const naiveRuns = await runsOf(NAIVE);
    const twice = new Set(log.rows.filter((r) => r.n >= 2).map((r) => r.idempotency_key));
    for (const r of naiveRuns) if (naiveCrashes.has(r.id)) expect(twice.has(r.idempotencyKey), `naive run ${r.id} applied once`).toBe(true);

    expect(daemonProblems(daemon!)).toEqual([]);
  }, 120_000);

  it('an effect that throws is rolled back: the retry (attempt 2, same key) applies it once', async () => {
    const { job } = await client.schedule({ queue: RETRY, delayMs: 0, leaseMs: LEASE_MS, retry: { maxAttempts: 3, initialBackoffMs: 100 } });
    expect(await waitUntil(async () => (await client.getJob(job.id)).job.status === 'completed', 20_000, 100), fleet!.errors).toBe(true);
    const { runs } = await client.getJob(job.id);
    expect(runs.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'completed'],
    ]);
    expect(runs[0].error).toContain('flaky after the update');
    expect(runs[1].idempotencyKey).toBe(runs[0].idempotencyKey);
    // Attempt 1's UPDATE was rolled back with its key row; attempt 2 applied the effect and recorded the key.
    expect(await balance('retry')).toBe(1);
    const row = await app!.query<{ run_id: string; result: unknown }>(`SELECT run_id, result FROM ${EFFECTS_TABLE} WHERE idempotency_key = $1`, [
      runs[0].idempotencyKey,
    ]);
    expect(row.rows).toEqual([{ run_id: runs[1].id, result: { attempt: 2 } }]);
  });
});

describe('table names', () => {
  it('are checked before any SQL is sent; ensureSchema is idempotent', async () => {
    const pool = app!;
    for (const bad of ['effects; DROP TABLE shop.accounts', 'Effects', 'a.b.c', '"quoted"', '', '1table', `t${'x'.repeat(63)}`]) {
      await expect(ensureSchema(pool, bad), bad).rejects.toThrow(/lower-case SQL identifier/);
      expect(() => exactlyOnce(pool, async () => undefined, { table: bad }), bad).toThrow(/lower-case SQL identifier/);
    }
    await ensureSchema(pool, EFFECTS_TABLE);
    await ensureSchema(pool, 'shop.other_effects');
    await ensureSchema(pool, 'shop.other_effects');
    const t = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'shop' AND table_name LIKE '%effects'`);
    expect(t.rows[0].n).toBe(2);
  });
});
