/**
 * End to end: per-queue limits hold across two daemons. Two real daemons
 * (shards split between them, permits in the shared Redis) and a worker on
 * each with plenty of credit; a queue limited to 4 in flight and 20 per
 * second; 100 runs due at one instant. Counted: every run completed once,
 * at most 4 running at any moment across both workers, hand-outs per second
 * at the limit, and the wait recorded as lateness. Then the limit is lifted
 * and a second burst goes through at once.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type TimelaneClient, timelaneV1, type Worker } from '@timelane/client';
import type { AdminClient } from '../../proto/gen/timelane/v1/Admin.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { closeClient, closeGrpcClient, daemonProblems, openClient, startDaemon, stopDaemon, waitUntil } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 8;
const QUEUE = 'payments';
const MAX_IN_FLIGHT = 4;
const PER_SECOND = 20;
const N = 100;
const HOLD_MS = 50;

let db: TestDatabase;
const prefix = redisPrefix();
const daemons: DaemonProcess[] = [];
let client: TimelaneClient;
let admin: AdminClient;
const workers: Worker[] = [];

let active = 0;
let maxActive = 0;
const started = new Map<string, { firedAtMs: number; dueAtMs: number }>();
let completions = 0;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  for (const id of ['la', 'lb']) {
    daemons.push(
      await startDaemon({
        databaseUrl: db.url,
        redisUrl: TEST_REDIS_URL,
        args: ['--member-id', id, '--redis-prefix', prefix, '--lease-ttl-ms', '1500', '--membership-interval-ms', '300'],
      }),
    );
  }
  client = openClient(daemons[0].address);
  admin = track(new (timelaneV1().Admin)(daemons[0].address, grpc.credentials.createInsecure()), 'raw admin client');
  // Both daemons hold shards: the limit must hold across them.
  expect(
    await waitUntil(async () => {
      const shards = await client.listShards();
      const owners = new Set(shards.map((s) => s.owner));
      return shards.every((s) => s.owner) && owners.size === 2;
    }, 20_000),
  ).toBe(true);
  for (const d of daemons) {
    const w = createWorker({
      address: d.address,
      queues: [QUEUE],
      concurrency: 50,
      workerId: `limits-${d.address}`,
      handler: async (run) => {
        active++;
        maxActive = Math.max(maxActive, active);
        started.set(run.runId, { firedAtMs: run.firedAtMs, dueAtMs: run.dueAtMs });
        await new Promise((r) => setTimeout(r, HOLD_MS));
        active--;
        completions++;
      },
    });
    workers.push(track(w, 'limits worker'));
  }
});

afterAll(async () => {
  for (const w of workers) {
    await w.close();
    untrack(w);
  }
  closeGrpcClient(admin);
  untrack(admin);
  closeClient(client);
  for (const d of daemons) await stopDaemon(d);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

function setLimits(maxInFlight: number, maxPerSecond: number): Promise<unknown> {
  return new Promise((resolve, reject) =>
    admin.setQueueLimits({ limits: { queue: QUEUE, maxInFlight, maxPerSecond } }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

describe('queue limits across two daemons', () => {
  it('a burst waits for permits: at most 4 in flight and 20 handed out per second, none lost', async () => {
    await setLimits(MAX_IN_FLIGHT, PER_SECOND);
    await new Promise((r) => setTimeout(r, 1_500)); // every daemon re-reads limits within a second
    const due = Date.now() + 1_500;
    const made = await client.scheduleBatch(Array.from({ length: N }, (_, i) => ({ queue: QUEUE, at: due, payload: { i } })));
    const shards = new Set(made.map((m) => m.run.shard));
    expect(shards.size).toBeGreaterThan(1);
    expect(await waitUntil(() => completions >= N, 30_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(completions).toBe(N); // each once
    expect(started.size).toBe(N);
    expect(maxActive).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(maxActive).toBe(MAX_IN_FLIGHT); // the limit, not the workers, was the bound
    // Hand-outs per second (the daemons' clock at the hand-off): the rate
    // budget is per second of the permit; a hand-off may land a few ms after
    // its permit's second, hence +2.
    const perSecond = new Map<number, number>();
    for (const s of started.values()) perSecond.set(Math.floor(s.firedAtMs / 1000), (perSecond.get(Math.floor(s.firedAtMs / 1000)) ?? 0) + 1);
    for (const [, n] of perSecond) expect(n).toBeLessThanOrEqual(PER_SECOND + 2);
    const lateness = [...started.values()].map((s) => s.firedAtMs - s.dueAtMs).sort((a, b) => a - b);
    // 100 runs at 20/s: the last waited about 4 s, and that wait is its recorded lateness.
    expect(lateness[N - 1]).toBeGreaterThan(3_000);
    const rows = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE queue = $1 AND status = 'completed' AND lag_ms >= 3000`, [QUEUE]);
    expect(Number(rows.rows[0].n)).toBeGreaterThan(0);
    for (const d of daemons) expect(daemonProblems(d)).toEqual([]);
  });

  it('with the limit lifted, a burst goes through at once', async () => {
    await setLimits(0, 0);
    await new Promise((r) => setTimeout(r, 1_500));
    maxActive = 0;
    completions = 0;
    started.clear();
    const due = Date.now() + 1_000;
    await client.scheduleBatch(Array.from({ length: 40 }, (_, i) => ({ queue: QUEUE, at: due, payload: { i } })));
    expect(await waitUntil(() => completions >= 40, 15_000)).toBe(true);
    expect(maxActive).toBeGreaterThan(MAX_IN_FLIGHT);
  });
});
