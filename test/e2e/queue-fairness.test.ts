/**
 * End to end: one queue's backlog does not hold back another queue. The
 * daemon claims only what delivery can hand out soon (claim-room.test.ts);
 * that room must be counted per queue. Counted against a shared room, a
 * queue whose runs wait in delivery (its worker slow, or its queue limit
 * spent) used the room up, and the runs of every other queue stayed
 * unclaimed, firing late by as long as the slow queue took to drain.
 *
 * Two scenarios, each on its own database and daemon: 3,000 runs due at one
 * instant for a queue that cannot take them (a stream of credit 5 that never
 * answers; a queue limited to one run in flight), then 20 runs of another
 * queue due over the next two seconds, for a stream that answers at once.
 * Counted: every run of the other queue arrives, each at most 1.5 s late (a
 * loaded two-core machine fires within tens of ms); and the held-back queue
 * still has only about a room's worth of runs fired, so the claims stay
 * bounded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveredRunInfo, TimelaneClient, WorkStream } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { chunks, closeClient, closeStream, freePort, openClient, openStream, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';

const SHARDS = 4;
/** Runs of the held-back queue, due at one instant. */
const BULK = 3_000;
/** Runs of the other queue, due one every SPACING_MS after it. */
const OTHERS = 20;
const SPACING_MS = 75;
/** The first run of the other queue is due this long after the bulk. */
const OTHERS_AFTER_MS = 250;
/** Most an other-queue run may arrive after its due time: generous for a loaded CI machine. */
const MAX_LATENESS_MS = 1_500;
/** How long past the last other-queue run's due time the test waits for stragglers. */
const WAIT_MS = 8_000;
/** The daemon parks at most about this many claimed runs for a queue whose workers have little credit. */
const ROOM = 1_000;
/** Claims in flight as the queue fills may go a little past its room. */
const ROOM_MARGIN = 250;
/** Long enough that no delivery lease runs out (or is renewed) during a test. */
const LEASE_MS = 60_000;

interface Stack {
  db: TestDatabase;
  daemon: DaemonProcess;
  client: TimelaneClient;
  streams: WorkStream[];
}

let stack: Stack | undefined;

async function startStack(memberId: string, metricsPort?: number): Promise<Stack> {
  const db = await createTestDatabase(SHARDS);
  const metrics = metricsPort === undefined ? [] : ['--metrics-address', `127.0.0.1:${metricsPort}`];
  const daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', memberId, ...metrics] });
  const client = openClient(daemon.address);
  stack = { db, daemon, client, streams: [] };
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  return stack;
}

afterEach(async () => {
  if (!stack) return;
  const { db, daemon, client, streams } = stack;
  stack = undefined;
  for (const s of streams) await closeStream(s);
  closeClient(client);
  await stopDaemon(daemon);
  await db.drop();
});

/** A subscribed stream on `queue` that records each delivery and, if `answer`, completes it at once. */
async function worker(s: Stack, queue: string, credit: number, answer: boolean): Promise<DeliveredRunInfo[]> {
  const stream = openStream(s.daemon.address, { queues: [queue], maxInFlight: credit, workerId: `fairness-${queue}` });
  s.streams.push(stream);
  await stream.subscribed();
  const received: DeliveredRunInfo[] = [];
  stream.onRun((run) => {
    received.push(run);
    if (answer) stream.complete(run.ref);
  });
  return received;
}

/** Schedules BULK runs of `bulkQueue` due at one instant, then OTHERS runs of `otherQueue` spread after it; returns the other runs' due times by id. */
async function scheduleBurst(client: TimelaneClient, bulkQueue: string, otherQueue: string): Promise<{ bulkDue: number; othersDue: Map<string, number> }> {
  const bulkDue = Date.now() + 2_000;
  for (const part of chunks(Array.from({ length: BULK }, (_, i) => i), 1_000))
    await client.scheduleBatch(part.map((i) => ({ queue: bulkQueue, at: bulkDue, leaseMs: LEASE_MS, payload: { i } })));
  const made = await client.scheduleBatch(
    Array.from({ length: OTHERS }, (_, i) => ({ queue: otherQueue, at: bulkDue + OTHERS_AFTER_MS + i * SPACING_MS, leaseMs: LEASE_MS, payload: { i } })),
  );
  expect(Date.now()).toBeLessThan(bulkDue); // scheduling took less than the lead
  return { bulkDue, othersDue: new Map(made.map((m) => [m.run.id, m.run.dueAtMs])) };
}

/** The daemon's timelane_runs_held_back gauge (updated every second). */
async function heldBackGauge(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^timelane_runs_held_back (\S+)$/m.exec(text)?.[1] ?? 0);
}

async function statusCounts(db: TestDatabase, queue: string): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs WHERE queue = $1 GROUP BY 1`, [queue]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/**
 * Waits until every other-queue run arrived and a second has passed since the
 * last was due (or WAIT_MS past that), sampling how many `bulkQueue` runs are
 * fired meanwhile; returns the most seen.
 */
async function watch(db: TestDatabase, bulkQueue: string, othersDue: Map<string, number>, others: DeliveredRunInfo[]): Promise<number> {
  const lastDue = Math.max(...othersDue.values());
  let mostFired = 0;
  for (;;) {
    mostFired = Math.max(mostFired, (await statusCounts(db, bulkQueue)).fired ?? 0);
    const now = Date.now();
    if (now >= lastDue + WAIT_MS) break;
    if (now >= lastDue + 1_000 && new Set(others.map((r) => r.runId)).size >= othersDue.size) break;
    await sleep(50);
  }
  return mostFired;
}

/**
 * Each other-queue run arrived, none later than MAX_LATENESS_MS. The failure
 * says how many came, how late, and where the held-back queue's runs are.
 */
async function expectOnTime(s: Stack, bulkQueue: string, otherQueue: string, othersDue: Map<string, number>, others: DeliveredRunInfo[]): Promise<void> {
  const now = Date.now();
  const lateness = new Map<string, number>();
  for (const r of others) if (!lateness.has(r.runId)) lateness.set(r.runId, r.receivedAtMs - r.dueAtMs);
  const missing = [...othersDue].filter(([id]) => !lateness.has(id));
  const summary = [
    `received ${lateness.size} of ${othersDue.size} runs of queue ${otherQueue}`,
    lateness.size > 0 ? `max lateness ${Math.round(Math.max(...lateness.values()))} ms` : 'max lateness: none arrived',
    ...(missing.length > 0 ? [`the missing ones ${Math.round(Math.min(...missing.map(([, due]) => now - due)))}+ ms overdue`] : []),
    `queue ${bulkQueue} ${JSON.stringify(await statusCounts(s.db, bulkQueue))}`,
  ].join('; ');
  expect(lateness.size, summary).toBe(othersDue.size);
  expect(Math.max(...lateness.values()), summary).toBeLessThanOrEqual(MAX_LATENESS_MS);
  for (const r of others) expect(othersDue.get(r.runId), `run ${r.runId} of queue ${r.queue}`).toBe(r.dueAtMs);
}

describe('one queue does not hold back another', () => {
  it('a served but slow queue (credit 5, never answered) with 3,000 runs due: another queue fires on time, and the slow one stays bounded', async () => {
    const metricsPort = await freePort();
    const s = await startStack('fairness-slow', metricsPort);
    const SLOW_CREDIT = 5;
    const slow = await worker(s, 'slow', SLOW_CREDIT, false);
    const fast = await worker(s, 'fast', 100, true);

    const { othersDue } = await scheduleBurst(s.client, 'slow', 'fast');
    const mostFired = await watch(s.db, 'slow', othersDue, fast);

    // The slow stream is full and holds its runs: its queue is the one backed up.
    expect(slow).toHaveLength(SLOW_CREDIT);
    await expectOnTime(s, 'slow', 'fast', othersDue, fast);
    // Claims of the slow queue stop at about its room: the rest stay scheduled.
    expect(mostFired).toBeGreaterThanOrEqual(SLOW_CREDIT);
    expect(mostFired).toBeLessThanOrEqual(ROOM + ROOM_MARGIN + SLOW_CREDIT);
    const scheduled = (await statusCounts(s.db, 'slow')).scheduled ?? 0;
    expect(scheduled).toBeGreaterThanOrEqual(BULK - ROOM - ROOM_MARGIN - SLOW_CREDIT);
    expect(await statusCounts(s.db, 'fast')).toEqual({ completed: OTHERS });
    // Operators see the backed-up queue: the slow runs left scheduled are held back, and counted.
    let held = 0;
    expect(await waitUntil(async () => (held = await heldBackGauge(metricsPort)) > 0, 5_000)).toBe(true);
    expect(held).toBeLessThanOrEqual(scheduled);
  }, 60_000);

  it('a queue limited to one run in flight with 3,000 runs due: another queue fires on time', async () => {
    const s = await startStack('fairness-limited');
    await s.client.setQueueLimits({ queue: 'limited', maxInFlight: 1, maxPerSecond: 0 });
    // In force on this daemon once the call returns: no wait for its periodic re-read.
    const limited = await worker(s, 'limited', 100, true);
    const other = await worker(s, 'other', 100, true);

    const { othersDue } = await scheduleBurst(s.client, 'limited', 'other');
    const mostFired = await watch(s.db, 'limited', othersDue, other);

    // The limit was in force: the limited queue is still working through its burst.
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.length).toBeLessThan(BULK);
    await expectOnTime(s, 'limited', 'other', othersDue, other);
    expect(mostFired).toBeLessThanOrEqual(ROOM + ROOM_MARGIN + 1);
    expect(await statusCounts(s.db, 'other')).toEqual({ completed: OTHERS });
  }, 60_000);
});
