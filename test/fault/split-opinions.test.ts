/**
 * Fault: two daemons that both believe they own the same shards. Postgres is
 * the arbiter (I-1): whatever Redis or the members think, each run's claim is
 * one UPDATE conditional on the run still being scheduled and on the shard's
 * current fence, so each run fires exactly once.
 *
 * (1) Both daemons pinned to every shard (`--shards 0-7`) in one cluster
 *     (one Redis prefix), while the test deletes the Redis lease keys
 *     (`<prefix>lease:*`) over and over: each deletion makes the holder's
 *     next extend fail and lets whoever asks first take the shard under a
 *     new fence.
 * (2) True split brain: the same two pinned daemons, each under its OWN Redis
 *     prefix (each sees itself alone, holds every lease in its own namespace
 *     and issues fences from its own counter), lease keys deleted repeatedly
 *     too. Both hold the same shards at the same time; every acquisition
 *     bumps the fence in Postgres, and the loser of each claim finds a stale
 *     fence and drops the shard.
 * Each: 1,000 AT_MOST_ONCE runs due over 6 s; every one fired exactly once.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TestCluster, sleep, type ClusterOptions } from '../helpers/cluster.js';
import { redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 8;
const N = 1_000;
const SPREAD_MS = 6_000;
const DELETE_EVERY_MS = 300;

/** Deletes `<prefix>lease:*` every `everyMs` until stopped; counts the keys it deleted. */
function leaseKeyDeleter(redis: Redis, prefixes: string[], everyMs: number): { stop: () => Promise<number> } {
  let deleted = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const p of prefixes) {
        try {
          const keys = await redis.keys(`${p}lease:*`);
          if (keys.length) deleted += await redis.del(...keys);
        } catch {
          /* keep going */
        }
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return deleted;
    },
  };
}

describe('fault: split opinions over shard ownership', () => {
  let cluster: TestCluster | undefined;
  let redis: Redis | undefined;

  afterEach(async () => {
    await cluster?.stopAll();
    cluster = undefined;
  });

  afterAll(() => {
    if (redis) {
      redis.disconnect();
      untrack(redis);
    }
  });

  async function scenario(tag: string, opts: ClusterOptions, prefixes: string[]): Promise<void> {
    redis ??= track(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 }), 'split-opinions redis client');
    cluster = await TestCluster.start({
      members: ['a', 'b'],
      shardCount: SHARDS,
      leaseTtlMs: 1_500,
      membershipIntervalMs: 300,
      args: () => ['--shards', `0-${SHARDS - 1}`],
      queue: `split-${tag}`,
      ...opts,
    });
    const c = cluster;
    expect(await c.waitAllShardsOwned(20_000, ['a', 'b'])).not.toBeNull();
    const fencesBefore = await c.shardRows();

    const from = Date.now() + 2_000;
    const runs = await c.scheduleSpread(N, from, SPREAD_MS, { delivery: 'at_most_once' });
    expect(Date.now()).toBeLessThan(from);

    const deleter = leaseKeyDeleter(redis, prefixes, DELETE_EVERY_MS);
    await sleep(Math.max(0, from + SPREAD_MS - Date.now()));
    const deletedKeys = await deleter.stop();

    const all = await c.waitAllReceived(30_000, runs);
    await sleep(2_000);
    const counts = c.counts(runs);
    const fencesAfter = await c.shardRows();
    const bumps = fencesAfter.reduce((sum, r) => sum + r.fence - fencesBefore.find((b) => b.shard === r.shard)!.fence, 0);
    const acquisitions = { a: c.acquired('a').length, b: c.acquired('b').length };
    const staleDrops = [...c.dropped('a'), ...c.dropped('b')].filter((e) => /stale/.test(e.reason ?? '')).length;
    const byMember = { a: c.recorder.deliveries.filter((d) => d.member === 'a').length, b: c.recorder.deliveries.filter((d) => d.member === 'b').length };
    c.report(`split-opinions ${tag}`, { deletedKeys, fenceBumps: bumps, acquisitions, staleDrops, deliveredBy: byMember });

    const lostRows = await c.runRows(counts.lostIds);
    expect(all, `received ${counts.fired}/${N}; lost ${JSON.stringify(lostRows.slice(0, 5))}`).toBe(true);
    expect(counts.unknown).toBe(0);
    expect(counts.lost).toBe(0);
    expect(counts.duplicates, `duplicated runs ${counts.duplicateIds.slice(0, 5).join(',')}`).toBe(0);
    expect(counts.fired).toBe(N);
    // Fences only moved forward, and moved a lot.
    for (const r of fencesAfter) expect(r.fence).toBeGreaterThanOrEqual(fencesBefore.find((b) => b.shard === r.shard)!.fence);
    expect(deletedKeys).toBeGreaterThan(0);
    expect(bumps).toBeGreaterThan(SHARDS);
    // Every delivery was claimed under the fence Postgres had then: two deliveries of one shard never share a fence with different members.
    const ownerOfFence = new Map<string, string>();
    const shardOf = new Map(runs.map((r) => [r.runId, r.shard]));
    for (const d of c.recorder.deliveries) {
      const key = `${shardOf.get(d.runId)}:${d.fence}`;
      const prev = ownerOfFence.get(key);
      if (prev) expect(prev, `shard:fence ${key} delivered by two members`).toBe(d.member);
      else ownerOfFence.set(key, d.member);
    }
    expect(c.problems()).toEqual([]);
  }

  it('(1) both pinned to every shard, one cluster, lease keys deleted repeatedly: each run fires exactly once', async () => {
    const prefix = redisPrefix();
    await scenario('shared', { prefix }, [prefix]);
  });

  it('(2) split brain: both pinned, separate Redis prefixes (both hold every lease), keys deleted: each run fires exactly once', async () => {
    const pa = redisPrefix();
    const pb = redisPrefix();
    await scenario('split', { prefix: pa, prefixOf: (id) => (id === 'a' ? pa : pb) }, [pa, pb]);
    const c = cluster!;
    // Both really believed they owned the same shards: each acquired every shard at least once.
    for (const m of ['a', 'b']) {
      const shards = new Set(c.acquired(m).map((e) => e.shard));
      expect(shards.size, `${m} acquired every shard`).toBe(SHARDS);
    }
    // And each claimed some runs: the arbiter let both fire, never the same run twice.
    expect(c.recorder.deliveries.filter((d) => d.member === 'a').length).toBeGreaterThan(0);
    expect(c.recorder.deliveries.filter((d) => d.member === 'b').length).toBeGreaterThan(0);
  });
});
