/**
 * End to end: claims wait for room in delivery. 5,000 runs come due at one
 * instant for a single stream that takes 10 at a time. The daemon claims
 * (fires in Postgres, starting each run's lease) only what delivery can hand
 * out soon, about a thousand; the rest stay scheduled until there is room.
 * Claimed all at once, the runs waited for credit with their leases running:
 * with 98,000 due together (bench:recurring) the leases ran out before the
 * hand-out and redeliveries buried the daemon. Counted: how many were fired
 * at most while the stream was full, every run completed, none delivered twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveredRunInfo, TimelaneClient, WorkStream } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { MIN_CLAIM_BATCH } from '../../daemon/dispatch/delivery-hub.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, closeStream, openClient, openStream, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';

const SHARDS = 4;
const RUNS = 5_000;
const CREDIT = 10;
/** DeliveryHub's MIN_ROOM: claims stop once this many wait for credit (the stream's own 2 × credit is less). */
const ROOM = 1_000;
/** A queue just short of full may take one more claim batch of this size before the claim holds it back. */
const OVERSHOOT = MIN_CLAIM_BATCH;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let stream: WorkStream | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'claim-room'] });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  await closeStream(stream);
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

async function statusCounts(): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs WHERE queue = 'room' GROUP BY 1`);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('claims wait for room in delivery', () => {
  it('5,000 runs due at once for a stream of credit 10: about a thousand fired at a time, all completed, none twice', async () => {
    stream = openStream(daemon!.address, { queues: ['room'], maxInFlight: CREDIT, workerId: 'room' });
    await stream.subscribed();
    const received: DeliveredRunInfo[] = [];
    let answering = false;
    stream.onRun((run) => {
      received.push(run);
      if (answering) stream!.complete(run.ref);
    });

    const dueAt = Date.now() + 2_000;
    for (let i = 0; i < RUNS; i += 1_000)
      await client.scheduleBatch(Array.from({ length: 1_000 }, () => ({ queue: 'room', at: dueAt })));

    // The stream fills up; the claims go on until delivery has no room left.
    expect(await waitUntil(() => received.length === CREDIT, 20_000)).toBe(true);
    expect(await waitUntil(async () => ((await statusCounts()).fired ?? 0) >= ROOM, 10_000)).toBe(true);
    // Watch for a while: nothing more is claimed while the stream stays full.
    let mostFired = 0;
    for (const until = Date.now() + 1_500; Date.now() < until; await sleep(50)) mostFired = Math.max(mostFired, (await statusCounts()).fired ?? 0);
    const held = await statusCounts();
    expect(mostFired).toBeLessThanOrEqual(ROOM + OVERSHOOT + CREDIT);
    expect(held.scheduled).toBeGreaterThanOrEqual(RUNS - ROOM - OVERSHOOT - CREDIT);
    expect(received).toHaveLength(CREDIT);

    // Answer everything: the rest is claimed as room frees up, and each run is delivered once.
    answering = true;
    for (const run of received) stream.complete(run.ref);
    expect(await waitUntil(async () => (await statusCounts()).completed === RUNS, 60_000)).toBe(true);
    const { rows } = await db.pool.query<{ n: number; twice: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE deliveries <> 1)::int AS twice FROM runs WHERE queue = 'room'`,
    );
    expect(rows[0]).toEqual({ n: RUNS, twice: 0 });
    expect(new Set(received.map((r) => r.runId)).size).toBe(RUNS);
    expect(received).toHaveLength(RUNS);
  }, 120_000);
});
