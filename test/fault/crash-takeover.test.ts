/**
 * Fault: kill -9 of one daemon of three, mid-load.
 *
 * 1,500 runs (half AT_LEAST_ONCE, half AT_MOST_ONCE) come due over 8 s; about
 * 3 s in, the member owning the most shards is killed. Its shards must be
 * acquired by the two peers within one lease TTL (+ slack: membership expiry
 * is 3 heartbeats, and the machine is shared), under fresh fences; every run
 * must fire (lost = 0); no AT_MOST_ONCE run may fire twice; an
 * AT_LEAST_ONCE run may be delivered again only if the dead daemon had fired
 * it before dying (in flight at the kill), with the same idempotency key and a
 * higher delivery number, by a survivor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, sleep, type ScheduledRun } from '../helpers/cluster.js';
import { waitUntil } from '../helpers/e2e.js';

const TTL = 1_500;
/** Takeover bound: one TTL plus slack for a busy machine (peers suspect the dead member from its liveness key and acquire at its leases' PTTL). */
const TAKEOVER_BOUND_MS = TTL + 2_500;
const N = 1_500;
const SPREAD_MS = 8_000;
const AT_LEAST_ONCE_LEASE_MS = 4_000;

describe('fault: kill -9 of a daemon under load', () => {
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    cluster = await TestCluster.start({ members: ['a', 'b', 'c'], shardCount: 16, leaseTtlMs: TTL, membershipIntervalMs: 300, queue: 'crash' });
  });

  afterAll(async () => {
    await cluster?.stopAll();
  });

  it('peers take the dead member’s shards within a TTL; nothing lost; at-most-once never twice', async () => {
    const c = cluster!;
    expect(await c.waitAllShardsOwned(20_000, ['a', 'b', 'c']), 'every shard owned before the load').not.toBeNull();
    // Wait for a balanced assignment (each member holds some shards).
    const balanced = async (): Promise<boolean> => {
      const rows = await c.shardRows();
      return ['a', 'b', 'c'].every((m) => rows.filter((r) => r.owner === m).length >= 4);
    };
    for (let i = 0; i < 100 && !(await balanced()); i++) await sleep(100);

    const from = Date.now() + 2_500;
    const runs: ScheduledRun[] = await c.scheduleSpread(N, from, SPREAD_MS, { delivery: 'mixed', leaseMs: AT_LEAST_ONCE_LEASE_MS });
    expect(runs).toHaveLength(N);
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from);

    // Kill 3 s into the load: the member with the most shards.
    await sleep(Math.max(0, from + 3_000 - Date.now()));
    const before = await c.shardRows();
    const victim = ['a', 'b', 'c'].sort((x, y) => before.filter((r) => r.owner === y).length - before.filter((r) => r.owner === x).length)[0];
    const victimShards = before.filter((r) => r.owner === victim);
    const fenceBefore = new Map(before.map((r) => [r.shard, r.fence]));
    const peers = ['a', 'b', 'c'].filter((m) => m !== victim);
    const { sentAt: killAt, exitedAt } = await c.killMemberTimed(victim);
    expect(victimShards.length).toBeGreaterThan(0);

    // Takeover: Postgres shows every shard owned by a survivor…
    const allOwnedAt = await c.waitAllShardsOwned(15_000, peers);
    expect(allOwnedAt, 'every shard owned by a survivor').not.toBeNull();
    // …each victim shard acquired by a peer (log) under a fence above the victim's.
    const takeover: number[] = [];
    const after = await c.shardRows();
    const peerAcquisition = (shard: number) =>
      peers
        .flatMap((p) => c.acquired(p).map((e) => ({ ...e, member: p })))
        .filter((e) => e.shard === shard && e.at >= killAt - 5)
        .sort((x, y) => x.at - y.at)[0];
    // The log line follows the Postgres write: give the pipes a moment.
    await waitUntil(() => victimShards.every((s) => peerAcquisition(s.shard) !== undefined), 3_000);
    for (const s of victimShards) {
      const acq = peerAcquisition(s.shard);
      expect(acq, `a peer logged 'shard acquired' for shard ${s.shard}`).toBeDefined();
      expect(acq.fence!).toBeGreaterThan(fenceBefore.get(s.shard)!);
      takeover.push(acq.at - killAt);
      const row = after.find((r) => r.shard === s.shard)!;
      expect(row.fence).toBeGreaterThan(fenceBefore.get(s.shard)!);
    }
    const worst = Math.max(...takeover);
    console.log(`[crash-takeover] victim ${victim} (${victimShards.length} shards): takeover per shard ms min ${Math.min(...takeover)} max ${worst}; DB all owned after ${allOwnedAt! - killAt} ms`);
    expect(worst, `takeover took ${worst} ms`).toBeLessThan(TAKEOVER_BOUND_MS);

    // Everything fires. At-least-once runs the victim fired but never got answered come back after their lease.
    // At-most-once runs are recorded as delivered BEFORE they are sent (DESIGN: "never redelivered"): one whose
    // claim the victim had committed but not yet written to a worker when it died is consumed by the crash.
    // That is the at-most-once contract, so those — claimed under the victim's own fence, before its exit was
    // seen, still 'fired' — and only those may be missing; every other run must arrive. (CI: one was claimed 6 ms
    // after the clock read that precedes the signal, while this process waited for its core.)
    const alo = runs.filter((r) => r.mode === 'at_least_once');
    const amo = runs.filter((r) => r.mode === 'at_most_once');
    const victimFences = new Set(c.acquired(victim).map((e) => `${e.shard}:${e.fence}`));
    const allAlo = await c.waitAllReceived(SPREAD_MS + 30_000, alo);
    let missingAmo: string[] = [];
    let consumed: Awaited<ReturnType<typeof c.runRows>> = [];
    await waitUntil(async () => {
      missingAmo = amo.filter((r) => !c.recorder.byRun.has(r.runId)).map((r) => r.runId);
      consumed = (await c.runRows(missingAmo)).filter(
        (r) => r.status === 'fired' && r.delivery === 'at_most_once' && victimFences.has(`${r.shard}:${r.fence}`) && r.claimedAtMs !== null && r.claimedAtMs <= exitedAt,
      );
      return consumed.length === missingAmo.length;
    }, 30_000, 250);
    await sleep(2_000); // let a duplicate show up
    const counts = c.counts(runs);
    const lostAlo = alo.filter((r) => !c.recorder.byRun.has(r.runId)).map((r) => r.runId);
    const consumedIds = new Set(consumed.map((r) => r.id));
    const unexplained = counts.lostIds.filter((id) => !consumedIds.has(id));
    c.report('crash-takeover', { victim, killAt: killAt - from, lostBeyondAtMostOnceCrashWindow: unexplained.length, atMostOnceConsumedByCrash: consumed.length });
    expect(counts.unknown).toBe(0);
    if (counts.lostIds.length) console.log(`[crash-takeover] not received: ${JSON.stringify(await c.runRows(counts.lostIds.slice(0, 10)))} (kill at ${killAt})`);
    expect(allAlo, `at-least-once received ${alo.length - lostAlo.length}/${alo.length}`).toBe(true);
    expect(lostAlo).toEqual([]);
    expect(unexplained, 'runs lost (beyond at-most-once claims the victim committed just before dying)').toEqual([]);
    expect(counts.fired + consumed.length).toBe(N);
    // The crash window is one claim round trip: a handful of runs at most.
    expect(consumed.length).toBeLessThanOrEqual(40);
    expect(counts.duplicatesAtMostOnce).toBe(0);

    // At-least-once duplicates: only runs the victim fired before it died, same idempotency key, redelivered by a survivor.
    const byId = new Map(runs.map((r) => [r.runId, r]));
    for (const id of counts.duplicateIds) {
      const run = byId.get(id)!;
      expect(run.mode).toBe('at_least_once');
      const got = c.recorder.byRun.get(id)!;
      const [first, ...rest] = got;
      expect(first.member, `run ${id}: first delivery by the victim`).toBe(victim);
      // Handed over before the kill (a staged one may start at its due time, just after it, before its worker sees its stream end).
      expect(first.arrivedAtMs, `run ${id}: handed over before the kill`).toBeLessThanOrEqual(exitedAt + 5);
      for (const d of rest) {
        expect(d.idempotencyKey).toBe(first.idempotencyKey);
        expect(d.delivery).toBeGreaterThan(first.delivery);
        expect(peers).toContain(d.member);
      }
    }
    // No delivery by the victim reached a worker after its death (sanity of the recorder's tags). Not by
    // firedAtMs: an at-most-once run staged at the worker before the kill starts there at its due time, after it.
    expect(c.recorder.deliveries.filter((d) => d.member === victim && d.arrivedAtMs > exitedAt + 5)).toEqual([]);
    // Nothing left scheduled in Postgres.
    const statuses = await c.runStatuses();
    expect(statuses.filter((s) => s.status === 'scheduled')).toEqual([]);
    console.log(`[crash-takeover] at-least-once duplicates ${counts.duplicatesAtLeastOnce} (runs in flight at the kill); statuses ${JSON.stringify(statuses)}`);
    expect(c.problems()).toEqual([]);
  });
});
