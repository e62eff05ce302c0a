/**
 * End to end: kill -9 of the daemon in the middle of a burst of due runs,
 * then a restart with the same member id, database and port. Nothing a client
 * was told is scheduled is lost (at-least-once), a duplicate delivery happens
 * only for a run that was in flight at the kill (same idempotency key), an
 * at-most-once run is never delivered twice, runs that came due while the
 * daemon was down fire after the restart with their lateness recorded, and the
 * worker reconnects on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckInfo, RunInfo, ScheduleInput, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import {
  CLAIM_AHEAD_MS,
  chunks,
  closeClient,
  collectRuns,
  daemonProblems,
  freePort,
  killDaemon,
  openClient,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 8;
const COUNT = 1_000;
const SPREAD_MS = 6_000;
// A lease counts from the claim. After the restart the daemon claims hundreds of overdue runs at
// once; on a loaded machine the last of them reach the worker over a second later. 2 s left too
// little to answer them (CI: 84 runs redelivered after their lease, none lost): 5 s leaves margin.
const LEASE_MS = 5_000;

async function allRuns(client: TimelaneClient, queue: string): Promise<Map<string, RunInfo>> {
  const out = new Map<string, RunInfo>();
  let pageToken = '';
  do {
    const page = await client.listRuns({ queue, pageSize: 1000, pageToken });
    for (const r of page.runs) out.set(r.id, r);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

describe.each([
  { name: 'postgres leases', redis: false },
  { name: 'redis leases', redis: true },
])('kill -9 mid-window and restart ($name)', ({ redis }) => {
  let db: TestDatabase;
  const prefix = redisPrefix();
  let daemon: DaemonProcess | undefined;
  let client: TimelaneClient | undefined;
  let worker: RecordingWorker | undefined;
  let port = 0;
  const queue = `crash-${redis ? 'redis' : 'pg'}`;
  const memberId = `crash-${redis ? 'r' : 'p'}`;
  const acks: { ack: AckInfo; at: number }[] = [];
  const streamErrors: string[] = [];

  const start = (): Promise<DaemonProcess> =>
    startDaemon({
      databaseUrl: db.url,
      redisUrl: redis ? TEST_REDIS_URL : undefined,
      args: [
        '--member-id', memberId,
        '--grpc-address', `127.0.0.1:${port}`,
        '--reap-interval-ms', '250',
        ...(redis ? ['--redis-prefix', prefix] : []),
      ],
    });

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    port = await freePort();
    daemon = await start();
    client = openClient(daemon.address);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    worker = collectRuns({
      address: daemon.address,
      queues: [queue],
      concurrency: 200,
      // A short handler so that some deliveries are in flight (unanswered) at the kill.
      handler: () => sleep(40),
      onAck: (ack) => acks.push({ ack, at: Date.now() }),
      onError: (err) => streamErrors.push(err.message),
    });
  });

  afterAll(async () => {
    await worker?.close();
    closeClient(client);
    await stopDaemon(daemon);
    if (redis) await deleteRedisPrefix(prefix);
    await db?.drop();
  });

  it(`loses none of ${COUNT} runs; duplicates only for runs in flight at the kill; overdue runs record their lag`, async () => {
    const c = client!;
    const rec = worker!.recorder;
    const t0 = Date.now() + 500;
    // Every 5th job is at-most-once: never delivered twice, even across the crash.
    const inputs: ScheduleInput[] = Array.from({ length: COUNT }, (_, i) => ({
      queue,
      at: t0 + Math.floor((i * SPREAD_MS) / COUNT),
      delivery: i % 5 === 0 ? 'at_most_once' : 'at_least_once',
      leaseMs: LEASE_MS,
      payload: { i },
    }));
    const results = (await Promise.all(chunks(inputs, 1_000).map((b) => c.scheduleBatch(b)))).flat();
    expect(results).toHaveLength(COUNT);
    const atMostOnce = new Set(results.filter((_, i) => inputs[i].delivery === 'at_most_once').map((r) => r.run.id));
    const dueOf = new Map(results.map((r) => [r.run.id, r.run.dueAtMs]));

    // kill -9 about 2 s into the burst.
    await sleep(Math.max(0, t0 + 2_000 - Date.now()));
    const before = rec.distinct;
    // The kill lands somewhere between these two: the daemon may still claim after the first (this
    // process can lose its core between reading the clock and sending the signal), never after the second.
    const killSentAt = Date.now();
    await killDaemon(daemon);
    const killedAt = Date.now();
    daemon = undefined;
    const okBeforeKill = new Set(acks.filter((a) => a.at <= killSentAt && a.ack.code === 0).map((a) => a.ack.runId));
    expect(before, 'the kill should land mid-burst').toBeGreaterThan(0);
    expect(before).toBeLessThan(COUNT);

    await sleep(2_000);
    const restartAt = Date.now();
    daemon = await start();
    const upAt = Date.now();
    expect(daemon.port).toBe(port);

    // At-least-once runs in flight at the kill come back after their lease (LEASE_MS) runs out.
    const atLeastOnceIds = [...dueOf.keys()].filter((id) => !atMostOnce.has(id));
    const allBack = await rec.waitForAll(atLeastOnceIds, SPREAD_MS + 20_000);
    await sleep(LEASE_MS + 1_000); // a late duplicate would show up now

    // Lost: at-least-once, none. At-most-once may lose only a run claimed before the kill.
    const lost = atLeastOnceIds.filter((id) => !rec.has(id));
    expect(allBack, `received ${rec.distinct}/${COUNT}`).toBe(true);
    expect(lost).toEqual([]);
    const runs = await allRuns(c, queue);
    // In flight at the kill: claimed before it (claimed_at is the claim as it happened),
    // and not yet completed by an acknowledged answer. The worker may or may not have received it.
    const claimedBeforeKill = (claimedAtMs: number): boolean => claimedAtMs > 0 && claimedAtMs <= killedAt;
    // A redelivery re-stamps claimed_at, so the first delivery's own claim time is the witness.
    const firstClaimAt = (id: string): number => rec.byRun.get(id)?.[0]?.run.claimedAtMs ?? 0;
    const inFlightAtKill = new Set([...runs.values()].filter((r) => claimedBeforeKill(firstClaimAt(r.id)) && !okBeforeKill.has(r.id)).map((r) => r.id));
    const amoMissing = [...atMostOnce].filter((id) => !rec.has(id));
    for (const id of amoMissing) {
      const r = runs.get(id)!;
      expect(r.status, `at-most-once run ${id} not delivered`).toBe('fired');
      expect(claimedBeforeKill(r.claimedAtMs), `at-most-once run ${id} claimed_at ${r.claimedAtMs}, kill ${killedAt}`).toBe(true);
    }

    // Duplicates: only runs in flight at the kill, with one idempotency key, and never at-most-once.
    const dups = rec.duplicates();
    const badDups = dups.filter((id) => !inFlightAtKill.has(id) || atMostOnce.has(id));
    // Times relative to the kill, to tell from a failure where a duplicate came from.
    const history = (id: string): string =>
      `run ${id} due ${dueOf.get(id)! - killedAt}: ` +
      rec.byRun
        .get(id)!
        .map((g) => `delivery ${g.run.delivery} (fence ${g.run.fence}) received ${g.receivedAt - killedAt} with lease until ${g.run.leaseExpiresAtMs - killedAt}`)
        .join('; ');
    expect(badDups.length, `${badDups.length} duplicates of runs not in flight at the kill (restart at ${restartAt - killedAt}, up at ${upAt - killedAt}), e.g.\n${badDups.slice(0, 3).map(history).join('\n')}`).toBe(0);
    // A run whose answer was acknowledged OK is never handed out again.
    const afterOk = acks.filter((a) => a.ack.code === 0).filter((a) => (rec.byRun.get(a.ack.runId) ?? []).some((g) => g.receivedAt > a.at));
    expect(afterOk.map((a) => history(a.ack.runId))).toEqual([]);
    for (const id of dups) {
      const got = rec.byRun.get(id)!;
      expect(new Set(got.map((g) => g.run.idempotencyKey)).size).toBe(1);
      expect(got.map((g) => g.run.delivery)).toEqual([...got.map((g) => g.run.delivery)].sort((a, b) => a - b));
      expect(new Set(got.map((g) => g.run.delivery)).size).toBe(got.length);
    }
    for (const id of atMostOnce) expect(rec.count(id)).toBeLessThanOrEqual(1);
    // Nothing fired early, before or after the crash.
    for (const { run, receivedAt } of rec.receipts) expect(receivedAt).toBeGreaterThanOrEqual(dueOf.get(run.runId)!);

    // Runs that came due while the daemon was down fired after the restart, with their lateness recorded.
    const overdue = [...dueOf].filter(([, due]) => due > killedAt + 5 + CLAIM_AHEAD_MS && due < restartAt).map(([id]) => id);
    expect(overdue.length).toBeGreaterThan(100);
    for (const id of overdue) {
      const r = runs.get(id)!;
      expect(r.firedAtMs, `run ${id}`).toBeGreaterThanOrEqual(restartAt);
      expect(r.lagMs, `run ${id} lag`).toBeGreaterThan(0);
      expect(r.lagMs).toBeGreaterThanOrEqual(restartAt - r.dueAtMs - 1);
      expect(Math.abs(r.lagMs - (r.firedAtMs - r.dueAtMs))).toBeLessThanOrEqual(1);
    }
    // And every at-least-once run ends completed (the worker answered the newest delivery).
    const notDone = async () => [...(await allRuns(c, queue)).values()].filter((r) => !atMostOnce.has(r.id) && r.status !== 'completed');
    await waitUntil(async () => (await notDone()).length === 0, 10_000, 250);
    expect((await notDone()).map((r) => `${r.id}:${r.status}`).slice(0, 10)).toEqual([]);

    // The worker reconnected by itself (its stream broke once).
    expect(streamErrors.length).toBeGreaterThanOrEqual(1);
    console.log(
      `[crash-restart ${redis ? 'redis' : 'pg'}] ${before} received before the kill, ${inFlightAtKill.size} in flight at it, ` +
        `${dups.length} duplicates, ${amoMissing.length} at-most-once lost in the crash, ${overdue.length} overdue at restart`,
    );
    expect(daemonProblems(daemon)).toEqual([]);
  });
});
