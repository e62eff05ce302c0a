/**
 * Fault: takeover is bounded by the lease, not by membership.
 *
 * Three daemons with a 1.5 s lease and a 5 s membership period (a member's
 * record outlives it by up to 15 s). Before the fix, peers took a dead or
 * frozen member's shards only once its record expired; now they suspect it
 * from its liveness key (TTL/2) and acquire as its leases lapse.
 *
 * 1. SIGSTOP of b under load: every shard b held fires on a peer, under a
 *    higher fence, within TTL + MARGIN_MS of the signal, while b is still a
 *    member (its record has not expired). SIGCONT: b drops its old shards,
 *    fires nothing under their fences, and gets a share back.
 * 2. kill -9 of c: the same bound, c still listed as a member meanwhile. The
 *    kill lands in a 600 ms pause in the load after every earlier run was
 *    received, so no at-most-once run is claimed-but-unsent when c dies; runs
 *    come due again 300 ms after the kill, so every shard of c has runs
 *    waiting for its new owner.
 * Counts over both phases (every run at-most-once): fired = scheduled, lost 0,
 * duplicated 0.
 * 3. Sidecar mode, same periods: a member pinned to shards 0-7 is killed; the
 *    standby (--standby) fires them within the same bound, the balanced
 *    member's shards stay put; lost 0, duplicated 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, logTime, sleep, type Delivery, type ScheduledRun } from '../helpers/cluster.js';
import { CLAIM_AHEAD_MS, waitUntil } from '../helpers/e2e.js';

const TTL = 1_500;
/** Much longer than the TTL: records expire after 3 periods (15 s). */
const MEMBERSHIP_MS = 5_000;
/**
 * Acquire at PTTL + fence write + window rebuild + one claim + delivery, on a
 * shared 2-core machine. 500 ms was exceeded by 32 ms once in a full CI run;
 * 800 ms still tells a lease-bound takeover (TTL) from a membership-bound
 * one (3 × 5 s) by a factor of seven.
 */
const MARGIN_MS = 800;
const BOUND_MS = TTL + MARGIN_MS;
const MEMBERS = ['a', 'b', 'c'];
const RATE = 300; // runs/s: ~19 per shard per second, so every shard has runs waiting for its takeover

describe('fault: takeover within one lease TTL whatever the membership period', () => {
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    cluster = await TestCluster.start({ members: MEMBERS, shardCount: 16, leaseTtlMs: TTL, membershipIntervalMs: MEMBERSHIP_MS, queue: 'lease-bound' });
  });

  afterAll(async () => {
    await cluster?.stopAll();
  });

  it('SIGSTOP and kill -9: shards fire elsewhere within TTL + margin; nothing lost or doubled', async () => {
    const c = cluster!;
    const owned = async (m: string): Promise<number> => (await c.shardRows()).filter((r) => r.owner === m).length;
    expect(await c.waitAllShardsOwned(20_000, MEMBERS)).not.toBeNull();
    expect(await waitUntil(async () => (await Promise.all(MEMBERS.map(owned))).every((n) => n >= 4), 15_000, 100), 'balanced before the load').toBe(true);

    /** Takeover of `victim`'s shards after a signal at `at`: per shard, first receipt elsewhere − at. */
    const takeover = async (victim: string, fences: Map<number, number>, at: number): Promise<number[]> => {
      const first = await c.waitFiredElsewhere(fences, victim, at, 15_000);
      expect(first, `every shard of ${victim} fired elsewhere`).not.toBeNull();
      const gaps = [...first!.values()].map((d: Delivery) => d.receivedAt - at);
      // The figure means "waited for the takeover" only if each shard had a run due before it.
      for (const [shard, d] of first!) {
        const waited = [...c.scheduled.values()].some((r) => r.shard === shard && r.dueAtMs >= at && r.dueAtMs < d.receivedAt - 50);
        expect(waited, `shard ${shard} had a run waiting for its new owner`).toBe(true);
      }
      // The victim's record has not expired: membership is not what moved the shards.
      expect((await c.client('a').listMembers()).map((m) => m.id), `${victim} still a member at the takeover`).toContain(victim);
      return gaps;
    };

    // ---- 1. SIGSTOP b ------------------------------------------------------------------
    const from = Date.now() + 2_500;
    const phase1: ScheduledRun[] = await c.scheduleSpread(RATE * 8, from, 8_000, { delivery: 'at_most_once' });
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from);
    await sleep(Math.max(0, from + 2_000 - Date.now()));
    const zombie = c.daemon('b');
    const bRows = (await c.shardRows()).filter((r) => r.owner === 'b');
    expect(bRows.length).toBeGreaterThan(0);
    const bFences = new Map(bRows.map((r) => [r.shard, r.fence]));
    const stopAt = Date.now();
    zombie.signal('SIGSTOP');
    const stopGaps = await takeover('b', bFences, stopAt);
    const logIndexAtCont = zombie.logs.length;
    zombie.signal('SIGCONT');
    console.log(`[lease-bound] SIGSTOP b (${bRows.length} shards): fired elsewhere after ms min ${Math.min(...stopGaps)} max ${Math.max(...stopGaps)} (bound ${BOUND_MS})`);
    expect(Math.max(...stopGaps), `SIGSTOP takeover ${JSON.stringify(stopGaps)}`).toBeLessThanOrEqual(BOUND_MS);

    // b wakes: drops what it held (its leases lapsed), then is handed a share again under new fences.
    const droppedAfter = (): Set<number> => new Set(c.dropped('b').filter((e) => e.index >= logIndexAtCont).map((e) => e.shard));
    expect(await waitUntil(() => bRows.every((r) => droppedAfter().has(r.shard)), 10_000), 'b dropped its old shards').toBe(true);
    expect(await waitUntil(async () => (await owned('b')) >= 4, 15_000, 100), 'b rejoined with a share').toBe(true);
    expect(await c.waitAllReceived(30_000, phase1), 'phase 1 all received').toBe(true);

    // ---- 2. kill -9 c, in a pause of the load --------------------------------------------
    expect(await waitUntil(async () => (await owned('c')) >= 4, 15_000, 100), 'c owns a share').toBe(true);
    const from2 = Date.now() + 2_500;
    const before = await c.scheduleSpread(RATE * 2, from2, 2_000, { delivery: 'at_most_once' });
    // The pause: [from2 + 2000, from2 + 2600); the kill at from2 + 2300.
    const after = await c.scheduleSpread(RATE * 6, from2 + 2_600, 6_000, { delivery: 'at_most_once' });
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from2);
    expect(await c.waitAllReceived(from2 + 2_300 - Date.now(), before), 'runs before the pause received before the kill').toBe(true);
    const cRows = (await c.shardRows()).filter((r) => r.owner === 'c');
    expect(cRows.length).toBeGreaterThan(0);
    await sleep(Math.max(0, from2 + 2_300 - Date.now()));
    // Nothing after the pause may be claimed yet (claims go out at most --claim-ahead-ms before due).
    expect(Date.now(), 'the kill must land in the pause').toBeLessThan(from2 + 2_550);
    const killAt = await c.killMember('c');
    const killGaps = await takeover('c', new Map(cRows.map((r) => [r.shard, r.fence])), killAt);
    console.log(`[lease-bound] kill -9 c (${cRows.length} shards): fired elsewhere after ms min ${Math.min(...killGaps)} max ${Math.max(...killGaps)} (bound ${BOUND_MS})`);
    expect(Math.max(...killGaps), `kill -9 takeover ${JSON.stringify(killGaps)}`).toBeLessThanOrEqual(BOUND_MS);

    // ---- counts ------------------------------------------------------------------------
    const runs = [...phase1, ...before, ...after];
    const all = await c.waitAllReceived(30_000, runs);
    // A duplicate would show up within a claim round trip; give it a generous moment.
    await sleep(1_000);
    const counts = c.counts(runs);
    // Diagnostic: who suspected whom, when (a healthy cluster should show nothing before the SIGSTOP).
    const suspicions = MEMBERS.flatMap((m) =>
      c.logs(m, 'suspected members changed (liveness lapsed)').map((l) => `${m}@${logTime(l) - stopAt}:${JSON.stringify(l.suspects)}`),
    );
    c.report('lease-bound', { stopGaps, killGaps, suspicions });
    expect(all, `received ${counts.fired}/${runs.length}; not received ${JSON.stringify(await c.runRows(counts.lostIds.slice(0, 5)))}`).toBe(true);
    expect(counts.unknown).toBe(0);
    expect(counts.fired).toBe(runs.length);
    expect(counts.lost).toBe(0);
    expect(counts.duplicates).toBe(0);
    // The zombie claimed nothing under the fences it held when it froze. Told by
    // the due time: a claim takes only runs due within CLAIM_AHEAD_MS of it (and a
    // run claimed just before the freeze reaches the worker only after SIGCONT).
    const shardOf = new Map(runs.map((r) => [r.runId, r.shard]));
    const stale = c.recorder.deliveries.filter(
      (d) => d.member === 'b' && d.dueAtMs > stopAt + 5 + CLAIM_AHEAD_MS && bFences.get(shardOf.get(d.runId)!) === d.fence,
    );
    expect(stale, 'b deliveries claimed under its old fences after SIGSTOP').toEqual([]);
    expect(c.problems()).toEqual([]);
  });
});

describe('fault: sidecar takeover within one lease TTL (pinned member killed, standby adopts)', () => {
  let cluster: TestCluster | undefined;
  const PINNED = 'p';
  const STANDBY = 's';

  beforeAll(async () => {
    cluster = await TestCluster.start({
      members: [PINNED, STANDBY, 'a'],
      shardCount: 16,
      leaseTtlMs: TTL,
      membershipIntervalMs: MEMBERSHIP_MS,
      queue: 'lease-bound-sidecar',
      args: (id) => (id === PINNED ? ['--shards', '0-7'] : id === STANDBY ? ['--standby'] : []),
    });
  });

  afterAll(async () => {
    await cluster?.stopAll();
  });

  it('kill -9 of the pinned member: the standby fires its shards within TTL + margin; nothing lost or doubled', async () => {
    const c = cluster!;
    // Pinned shards on p, the rest on a (the only balanced member), nothing on the standby.
    const placed = async (): Promise<boolean> => (await c.shardRows()).every((r) => r.owner === (r.shard < 8 ? PINNED : 'a'));
    expect(await waitUntil(placed, 20_000, 100), 'p owns 0-7 and a owns 8-15').toBe(true);

    // Load with a pause around the kill (as above: nothing claimed-but-unsent when p dies).
    const from = Date.now() + 2_500;
    const before = await c.scheduleSpread(RATE * 2, from, 2_000, { delivery: 'at_most_once' });
    const after = await c.scheduleSpread(RATE * 4, from + 2_600, 4_000, { delivery: 'at_most_once' });
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from);
    expect(await c.waitAllReceived(from + 2_300 - Date.now(), before), 'runs before the pause received before the kill').toBe(true);
    const pRows = (await c.shardRows()).filter((r) => r.owner === PINNED);
    expect(pRows.map((r) => r.shard)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await sleep(Math.max(0, from + 2_300 - Date.now()));
    expect(Date.now(), 'the kill must land in the pause').toBeLessThan(from + 2_550);
    const killAt = await c.killMember(PINNED);

    const first = await c.waitFiredElsewhere(new Map(pRows.map((r) => [r.shard, r.fence])), PINNED, killAt, 15_000);
    expect(first, 'every pinned shard fired elsewhere').not.toBeNull();
    const gaps = [...first!.values()].map((d) => d.receivedAt - killAt);
    console.log(`[lease-bound sidecar] kill -9 p (8 pinned shards): fired by ${[...new Set([...first!.values()].map((d) => d.member))].join(',')} after ms min ${Math.min(...gaps)} max ${Math.max(...gaps)} (bound ${BOUND_MS})`);
    for (const d of first!.values()) expect(d.member, 'the standby adopts the orphans').toBe(STANDBY);
    expect((await c.client('a').listMembers()).map((m) => m.id), 'p still a member at the takeover').toContain(PINNED);
    expect(Math.max(...gaps), `sidecar takeover ${JSON.stringify(gaps)}`).toBeLessThanOrEqual(BOUND_MS);
    // The balanced member's shards did not move.
    expect((await c.shardRows()).filter((r) => r.shard >= 8).every((r) => r.owner === 'a')).toBe(true);

    const runs = [...before, ...after];
    expect(await c.waitAllReceived(30_000, runs)).toBe(true);
    await sleep(1_000);
    const counts = c.counts(runs);
    c.report('lease-bound sidecar', { gaps });
    expect(counts.fired).toBe(runs.length);
    expect(counts.lost).toBe(0);
    expect(counts.duplicates).toBe(0);
    expect(counts.unknown).toBe(0);
    expect(c.problems()).toEqual([]);
  });
});
