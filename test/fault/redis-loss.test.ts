/**
 * Fault: Redis forgets, or goes away. Three daemons on a PRIVATE Redis.
 *
 * (i) kill -9 + restart on the same port, empty, mid-load (I-2): leases and
 *     fence counters are gone. No run fires twice, none is lost; fences in
 *     Postgres only move forward (every re-acquired shard strictly above its
 *     fence before the loss: the counters are re-seeded past Postgres); every
 *     shard has an owner again within about one TTL of Redis answering.
 * (ii) Redis unreachable (SIGSTOP: connections stay up, nothing answers) for
 *     longer than the TTL: once their leases lapse the daemons fire nothing;
 *     after it answers again every shard is owned again and every run fires
 *     (late), none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, sleep, type ScheduledRun, type ShardRowInfo } from '../helpers/cluster.js';
import { PrivateRedis } from '../helpers/private-redis.js';
import { waitUntil } from '../helpers/e2e.js';

const TTL = 1_500;
/** Redis back → every shard owned: one TTL + slack (ioredis reconnect backoff, membership, acquire tick, busy machine). */
const OWNED_AGAIN_BOUND_MS = TTL + 3_000;
const MEMBERS = ['a', 'b', 'c'];

describe('fault: Redis loss', () => {
  let redis: PrivateRedis | undefined;
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    cluster = await TestCluster.start({ members: MEMBERS, shardCount: 16, redisUrl: redis.url, leaseTtlMs: TTL, membershipIntervalMs: 300, queue: 'redis-loss' });
  });

  afterAll(async () => {
    redis?.resume();
    await cluster?.stopAll();
    await redis?.close();
  });

  it('(i) Redis restarts empty mid-load: nothing lost or doubled, fences move forward, shards owned again within ~a TTL', async () => {
    const c = cluster!;
    const r = redis!;
    expect(await c.waitAllShardsOwned(20_000, MEMBERS)).not.toBeNull();

    const N = 1_200;
    const SPREAD = 8_000;
    const from = Date.now() + 2_500;
    const runs: ScheduledRun[] = await c.scheduleSpread(N, from, SPREAD, { delivery: 'mixed', leaseMs: 4_000 });
    expect(Date.now()).toBeLessThan(from);

    await sleep(Math.max(0, from + 3_000 - Date.now()));
    const before: ShardRowInfo[] = await c.shardRows();
    const logMark = new Map(MEMBERS.map((m) => [m, c.daemon(m).logs.length]));
    const killAt = Date.now();
    await r.kill9();
    await r.restart();
    const backAt = Date.now();
    expect(await r.waitReady(5_000)).toBe(true);

    // Every shard acquired again after the restart (logs), and Postgres shows an owner for each.
    const reacquired = (): Map<number, { at: number; fence: number; member: string }> => {
      const m = new Map<number, { at: number; fence: number; member: string }>();
      for (const id of MEMBERS) {
        for (const e of c.acquired(id)) {
          if (e.index < (logMark.get(id) ?? 0)) continue;
          const cur = m.get(e.shard);
          if (!cur || e.at < cur.at) m.set(e.shard, { at: e.at, fence: e.fence!, member: id });
        }
      }
      return m;
    };
    // (Postgres still names the old owners until each daemon notices its lease is gone: wait for the logs.)
    await waitUntil(() => reacquired().size === 16, 15_000);
    const ownedAt = await c.waitAllShardsOwned(15_000, MEMBERS);
    expect(ownedAt, 'every shard owned again').not.toBeNull();
    const after = await c.shardRows();
    const again = reacquired();
    const times = [...again.values()].map((v) => v.at - backAt);
    console.log(
      `[redis-loss i] redis down ${backAt - killAt} ms; re-acquired ${again.size}/16 shards, ms after Redis back: max ${Math.max(...times)}; DB all owned (checked) ${ownedAt! - backAt} ms after`,
    );
    // Fences: forward only; strictly above for re-acquired shards.
    for (const b of before) {
      const a = after.find((x) => x.shard === b.shard)!;
      expect(a.fence, `shard ${b.shard} fence`).toBeGreaterThanOrEqual(b.fence);
      const re = again.get(b.shard);
      if (re) {
        expect(re.fence, `shard ${b.shard} re-acquired fence`).toBeGreaterThan(b.fence);
        expect(a.fence).toBeGreaterThan(b.fence);
      }
    }
    // Redis lost every lease: every shard was re-acquired, within ~a TTL of Redis answering.
    if (again.size !== 16) {
      for (const m of MEMBERS) console.log(m, c.daemon(m).logs.slice(logMark.get(m)).filter((l) => /shard|lease|assign/.test(String(l.msg))).map((l) => JSON.stringify(l)).join('\n'));
      console.log(JSON.stringify(before), JSON.stringify(after));
    }
    expect(again.size).toBe(16);
    expect(Math.max(...times), 're-acquisition after Redis came back').toBeLessThan(OWNED_AGAIN_BOUND_MS);
    const reseeds = MEMBERS.flatMap((m) => c.logs(m, 'redis lease: fence counter is not above Postgres (Redis restarted empty?); re-seeding'));
    expect(reseeds.length, 'fence counters re-seeded past Postgres').toBeGreaterThan(0);

    const all = await c.waitAllReceived(SPREAD + 30_000, runs);
    await sleep(2_000);
    const counts = c.counts(runs);
    c.report('redis-loss i', { killAt: killAt - from });
    const lostRows = await c.runRows(counts.lostIds);
    expect(all, `received ${counts.fired}/${N}; lost ${JSON.stringify(lostRows.slice(0, 5))}`).toBe(true);
    expect(counts.lost).toBe(0);
    expect(counts.duplicatesAtMostOnce).toBe(0);
    // At-least-once: Redis forgetting is no crash; nothing was in doubt, so nothing is redelivered either.
    expect(counts.duplicates).toBe(0);
    expect(counts.unknown).toBe(0);
  });

  it('(ii) Redis unreachable past the TTL: no fires while it is away; afterwards all shards owned and every run fires once', async () => {
    const c = cluster!;
    const r = redis!;
    expect(await c.waitAllShardsOwned(20_000, MEMBERS)).not.toBeNull();
    const N = 1_000;
    const SPREAD = 8_000;
    const OUTAGE = 4_500; // 3 × TTL
    const from = Date.now() + 2_500;
    const runs = await c.scheduleSpread(N, from, SPREAD, { delivery: 'at_most_once' });
    expect(Date.now()).toBeLessThan(from);

    await sleep(Math.max(0, from + 2_000 - Date.now()));
    const logMark = new Map(MEMBERS.map((m) => [m, c.daemon(m).logs.length]));
    const pauseAt = Date.now();
    r.pause();
    await sleep(OUTAGE);
    const resumeAt = Date.now();
    r.resume();
    expect(await r.waitReady(5_000)).toBe(true);
    const backAt = Date.now();

    // While Redis was away: fires stop once the leases lapse (validity 0.9 × TTL from the last extend, before the pause).
    const ids = new Set(runs.map((x) => x.runId));
    const mine = c.recorder.deliveries.filter((d) => ids.has(d.runId));
    const firedDuring = mine.filter((d) => d.firedAtMs > pauseAt + TTL && d.firedAtMs < resumeAt);
    const receivedDuring = mine.filter((d) => d.receivedAt > pauseAt + TTL + 1_000 && d.receivedAt < resumeAt);
    const dueDuring = runs.filter((x) => x.dueAtMs > pauseAt + TTL && x.dueAtMs < resumeAt).length;
    console.log(
      `[redis-loss ii] paused ${resumeAt - pauseAt} ms; runs due in the blackout ${dueDuring}; fired in it ${firedDuring.length}; received in it ${receivedDuring.length}; last fire ${Math.max(...mine.filter((d) => d.firedAtMs < resumeAt).map((d) => d.firedAtMs)) - pauseAt} ms after the pause`,
    );
    expect(dueDuring).toBeGreaterThan(100);
    expect(firedDuring, 'runs claimed more than a TTL into the Redis outage').toEqual([]);
    expect(receivedDuring, 'runs received more than a TTL (+1 s) into the Redis outage').toEqual([]);
    // Each daemon dropped its shards (lease lapsed) during the outage.
    for (const m of MEMBERS) {
      const dropped = c.dropped(m).filter((e) => e.index >= (logMark.get(m) ?? 0));
      expect(dropped.length, `${m} dropped its shards`).toBeGreaterThan(0);
    }

    // Redis back: every shard acquired again (logs), Postgres names an owner for each, then everything fires.
    const reacquiredNow = () => MEMBERS.flatMap((m) => c.acquired(m).filter((e) => e.index >= (logMark.get(m) ?? 0) && e.at >= resumeAt - 5));
    await waitUntil(() => new Set(reacquiredNow().map((e) => e.shard)).size === 16, 15_000);
    const ownedAt = await c.waitAllShardsOwned(15_000, MEMBERS);
    expect(ownedAt).not.toBeNull();
    const reacq = reacquiredNow();
    const shardsBack = new Set(reacq.map((e) => e.shard));
    const lastAcq = Math.max(...MEMBERS.map(() => 0), ...[...shardsBack].map((s) => Math.min(...reacq.filter((e) => e.shard === s).map((e) => e.at))));
    console.log(`[redis-loss ii] after SIGCONT: ${shardsBack.size}/16 shards re-acquired, last first-acquisition ${lastAcq - backAt} ms after Redis answered; DB all owned ${ownedAt! - backAt} ms after`);
    expect(shardsBack.size).toBe(16);
    expect(lastAcq - backAt).toBeLessThan(OWNED_AGAIN_BOUND_MS);

    const all = await c.waitAllReceived(SPREAD + 30_000, runs);
    await sleep(2_000);
    const counts = c.counts(runs);
    const lateAcquires = MEMBERS.flatMap((m) => c.logs(m, 'redis lease: lease expired while being taken; giving it back')).length;
    const timedOut = MEMBERS.flatMap((m) => c.logs(m, 'shard lease: acquire timed out')).length;
    c.report('redis-loss ii', { pauseAt: pauseAt - from, resumeAt: resumeAt - from, acquireTimeouts: timedOut, lateAcquisitionsGivenBack: lateAcquires });
    const lostRows = await c.runRows(counts.lostIds);
    expect(all, `received ${counts.fired}/${N}; lost ${JSON.stringify(lostRows.slice(0, 5))}`).toBe(true);
    expect(counts.lost).toBe(0);
    expect(counts.duplicates).toBe(0);
    expect(counts.unknown).toBe(0);
    // Runs due in the blackout fired late, after Redis returned.
    const late = runs.filter((x) => x.dueAtMs > pauseAt + TTL && x.dueAtMs < resumeAt).map((x) => c.recorder.byRun.get(x.runId)![0]);
    expect(late.every((d) => d.firedAtMs >= resumeAt)).toBe(true);
    expect(c.problems()).toEqual([]);
  });
});
