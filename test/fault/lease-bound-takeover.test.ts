/**
 * Fault: takeover is bounded by the lease, not by membership.
 *
 * Three daemons with a 1.5 s lease and a 5 s membership period (a member's
 * record outlives it by up to 15 s). Before the fix, peers took a dead or
 * frozen member's shards only once its record expired; now they suspect it
 * from its liveness key (TTL/2) and acquire as its leases lapse.
 *
 * 1. SIGSTOP of b under load: a peer acquires every shard b held, under a
 *    higher fence, within TTL + MARGIN_MS of the signal (its 'shard acquired'
 *    line), and fires it within FIRE_BOUND_MS of taking it, while b is still
 *    a member (its record has not expired). SIGCONT: b drops its old shards,
 *    fires nothing under their fences, and gets a share back.
 * 2. kill -9 of c: the same bound, c still listed as a member meanwhile. The
 *    kill comes after every earlier run was received and before any later
 *    run can be claimed, so no at-most-once run is claimed-but-unsent when c
 *    dies.
 * Counts over both phases (every run at-most-once): fired = scheduled, lost 0,
 * duplicated 0.
 * 3. Sidecar mode, same periods: a member pinned to shards 0-7 is killed; the
 *    standby (--standby) acquires and fires them within the same bound, the
 *    balanced member's shards stay put; lost 0, duplicated 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, logTime, sleep, type Delivery, type LogEvent, type ScheduledRun } from '../helpers/cluster.js';
import { CLAIM_AHEAD_MS, waitUntil } from '../helpers/e2e.js';

const TTL = 1_500;
/** Much longer than the TTL: records expire after 3 periods (15 s). */
const MEMBERSHIP_MS = 5_000;
/**
 * Measured to the peer's 'shard acquired' line: the lease's PTTL (≤ TTL) plus
 * the expiry timer and one acquire (Redis + fence write) on a shared 2-core
 * machine. (Measured to the first receipt, which adds window rebuild, claim
 * and delivery, a 500 ms margin was once exceeded by 32 ms.) 2.3 s still tells
 * a lease-bound takeover from a membership-bound one (the record outlives its
 * last heartbeat by 10-15 s) by a factor of four.
 */
const MARGIN_MS = 800;
const BOUND_MS = TTL + MARGIN_MS;
/** New owner's 'shard acquired' line (or the run's due time, if later) → first receipt: window rebuild, one claim, delivery. */
const FIRE_BOUND_MS = 1_000;
const MEMBERS = ['a', 'b', 'c'];
const RATE = 300; // runs/s: ~19 per shard per second, so every shard has runs waiting for its takeover

type Acquisition = LogEvent & { member: string };

/**
 * Per shard of `first` (its first delivery elsewhere): receipt − the later of
 * the deliverer's 'shard acquired' line for that fence and the run's due time.
 * Undefined while that line has not come through the pipe yet.
 */
function firedAfterTaken(c: TestCluster, first: ReadonlyMap<number, Delivery>): (number | undefined)[] {
  return [...first].map(([shard, d]) => {
    const acq = c.acquired(d.member).find((e) => e.shard === shard && e.fence === d.fence);
    return acq === undefined ? undefined : d.receivedAt - Math.max(acq.at, d.dueAtMs);
  });
}

async function waitFiredAfterTaken(c: TestCluster, first: ReadonlyMap<number, Delivery>): Promise<number[]> {
  let lags = firedAfterTaken(c, first);
  await waitUntil(() => (lags = firedAfterTaken(c, first)).every((x) => x !== undefined), 3_000);
  expect(lags.every((x) => x !== undefined), "each first delivery's 'shard acquired' line").toBe(true);
  return lags as number[];
}

/** Per shard of `fences` (shard → fence `victim` held it under): the first 'shard acquired' line of another member, under a higher fence, at or after `since`. */
function acquiredElsewhere(c: TestCluster, victim: string, fences: ReadonlyMap<number, number>, since: number): Map<number, Acquisition> {
  const first = new Map<number, Acquisition>();
  for (const member of c.history.keys()) {
    if (member === victim) continue;
    for (const e of c.acquired(member)) {
      const old = fences.get(e.shard);
      if (old === undefined || e.fence === undefined || e.fence <= old || e.at < since) continue;
      const seen = first.get(e.shard);
      if (seen === undefined || e.at < seen.at) first.set(e.shard, { ...e, member });
    }
  }
  return first;
}

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

    /**
     * Takeover of `victim`'s shards after a signal at `at`: per shard, a peer's
     * 'shard acquired' line − at; and how soon the new owner fired it once taken.
     */
    const takeover = async (victim: string, fences: Map<number, number>, at: number): Promise<{ gaps: number[]; fireLags: number[] }> => {
      let acquired = new Map<number, Acquisition>();
      const all = await waitUntil(() => (acquired = acquiredElsewhere(c, victim, fences, at)).size === fences.size, 15_000);
      expect(all, `every shard of ${victim} acquired elsewhere (got ${[...acquired.keys()].join(',')})`).toBe(true);
      // …and fired there, under the new fence.
      const first = await c.waitFiredElsewhere(fences, victim, at, 15_000);
      expect(first, `every shard of ${victim} fired elsewhere`).not.toBeNull();
      // The victim's record has not expired: membership is not what moved the shards.
      expect((await c.client('a').listMembers()).map((m) => m.id), `${victim} still a member at the takeover`).toContain(victim);
      const fireLags = await waitFiredAfterTaken(c, first!);
      const gaps = [...acquired.values()].map((e) => e.at - at);
      console.log(`[lease-bound] ${victim} (${fences.size} shards): acquired elsewhere after ms min ${Math.min(...gaps)} max ${Math.max(...gaps)} (bound ${BOUND_MS}); fired after taken ms max ${Math.max(...fireLags)} (bound ${FIRE_BOUND_MS})`);
      return { gaps, fireLags };
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
    const { gaps: stopGaps, fireLags: stopFireLags } = await takeover('b', bFences, stopAt);
    const logIndexAtCont = zombie.logs.length;
    zombie.signal('SIGCONT');
    expect(Math.max(...stopGaps), `SIGSTOP takeover ${JSON.stringify(stopGaps)}`).toBeLessThanOrEqual(BOUND_MS);
    expect(Math.max(...stopFireLags), `SIGSTOP: fired after taken ${JSON.stringify(stopFireLags)}`).toBeLessThanOrEqual(FIRE_BOUND_MS);

    // b wakes: drops what it held (its leases lapsed), then is handed a share again under new fences.
    const droppedAfter = (): Set<number> => new Set(c.dropped('b').filter((e) => e.index >= logIndexAtCont).map((e) => e.shard));
    expect(await waitUntil(() => bRows.every((r) => droppedAfter().has(r.shard)), 10_000), 'b dropped its old shards').toBe(true);
    expect(await waitUntil(async () => (await owned('b')) >= 4, 15_000, 100), 'b rejoined with a share').toBe(true);
    expect(await c.waitAllReceived(30_000, phase1), 'phase 1 all received').toBe(true);

    // ---- 2. kill -9 c, with nothing claimed-but-unsent ------------------------------------
    expect(await waitUntil(async () => (await owned('c')) >= 4, 15_000, 100), 'c owns a share').toBe(true);
    const from2 = Date.now() + 2_500;
    const before = await c.scheduleSpread(RATE * 2, from2, 2_000, { delivery: 'at_most_once' });
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from2);
    // Every run so far reached a worker: c dies holding no claimed-but-unsent at-most-once run.
    expect(await c.waitAllReceived(from2 + 2_000 + 10_000 - Date.now(), before), 'runs before the kill received before the kill').toBe(true);
    const cRows = (await c.shardRows()).filter((r) => r.owner === 'c');
    expect(cRows.length).toBeGreaterThan(0);
    const after = await c.scheduleSpread(RATE * 6, Date.now() + 2_500, 6_000, { delivery: 'at_most_once' });
    const killAt = await c.killMember('c');
    // …nor any later one: a claim takes only runs due within CLAIM_AHEAD_MS of it.
    expect(killAt + 5 + CLAIM_AHEAD_MS, 'the kill must come before any later run may be claimed').toBeLessThan(Math.min(...after.map((r) => r.dueAtMs)));
    const { gaps: killGaps, fireLags: killFireLags } = await takeover('c', new Map(cRows.map((r) => [r.shard, r.fence])), killAt);
    expect(Math.max(...killGaps), `kill -9 takeover ${JSON.stringify(killGaps)}`).toBeLessThanOrEqual(BOUND_MS);
    expect(Math.max(...killFireLags), `kill -9: fired after taken ${JSON.stringify(killFireLags)}`).toBeLessThanOrEqual(FIRE_BOUND_MS);

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
    c.report('lease-bound', { stopGaps, killGaps, stopFireLags, killFireLags, suspicions });
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

    // As above: the kill comes after every earlier run was received and before any later one may be claimed.
    const from = Date.now() + 2_500;
    const before = await c.scheduleSpread(RATE * 2, from, 2_000, { delivery: 'at_most_once' });
    expect(Date.now(), 'scheduling must finish before the first run is due').toBeLessThan(from);
    expect(await c.waitAllReceived(from + 2_000 + 10_000 - Date.now(), before), 'runs before the kill received before the kill').toBe(true);
    const pRows = (await c.shardRows()).filter((r) => r.owner === PINNED);
    expect(pRows.map((r) => r.shard)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const after = await c.scheduleSpread(RATE * 4, Date.now() + 2_500, 4_000, { delivery: 'at_most_once' });
    const killAt = await c.killMember(PINNED);
    expect(killAt + 5 + CLAIM_AHEAD_MS, 'the kill must come before any later run may be claimed').toBeLessThan(Math.min(...after.map((r) => r.dueAtMs)));

    const pFences = new Map(pRows.map((r) => [r.shard, r.fence]));
    let acquired = new Map<number, Acquisition>();
    expect(await waitUntil(() => (acquired = acquiredElsewhere(c, PINNED, pFences, killAt)).size === pFences.size, 15_000), 'every pinned shard acquired elsewhere').toBe(true);
    for (const e of acquired.values()) expect(e.member, 'the standby adopts the orphans').toBe(STANDBY);
    const first = await c.waitFiredElsewhere(pFences, PINNED, killAt, 15_000);
    expect(first, 'every pinned shard fired elsewhere').not.toBeNull();
    for (const d of first!.values()) expect(d.member, 'the standby fires the orphans').toBe(STANDBY);
    expect((await c.client('a').listMembers()).map((m) => m.id), 'p still a member at the takeover').toContain(PINNED);
    const gaps = [...acquired.values()].map((e) => e.at - killAt);
    const fireLags = await waitFiredAfterTaken(c, first!);
    console.log(`[lease-bound sidecar] kill -9 p (8 pinned shards): acquired by ${STANDBY} after ms min ${Math.min(...gaps)} max ${Math.max(...gaps)} (bound ${BOUND_MS}); fired after taken ms max ${Math.max(...fireLags)} (bound ${FIRE_BOUND_MS})`);
    expect(Math.max(...gaps), `sidecar takeover ${JSON.stringify(gaps)}`).toBeLessThanOrEqual(BOUND_MS);
    expect(Math.max(...fireLags), `sidecar: fired after taken ${JSON.stringify(fireLags)}`).toBeLessThanOrEqual(FIRE_BOUND_MS);
    // The balanced member's shards did not move.
    expect((await c.shardRows()).filter((r) => r.shard >= 8).every((r) => r.owner === 'a')).toBe(true);

    const runs = [...before, ...after];
    expect(await c.waitAllReceived(30_000, runs)).toBe(true);
    await sleep(1_000);
    const counts = c.counts(runs);
    c.report('lease-bound sidecar', { gaps, fireLags });
    expect(counts.fired).toBe(runs.length);
    expect(counts.lost).toBe(0);
    expect(counts.duplicates).toBe(0);
    expect(counts.unknown).toBe(0);
    expect(c.problems()).toEqual([]);
  });
});
