/**
 * Fault: kill -9 of the daemon whose runs a worker holds staged.
 *
 * A worker streams from both members of a two-daemon cluster and takes runs
 * up to a second ahead of their due time (staging). Member a is killed while
 * the worker holds a's runs, a few hundred ms before they are due. Their
 * stream ends; the worker drops those runs unstarted (at least once: they
 * are to be handed out again) and tells the other member (Unstarted), which
 * ends their delivery leases; b takes a's shards and hands them out again at
 * once — not after their 30 s lease, as it would for runs nobody returned.
 *
 * Asserted: every run fires exactly once (lost 0, duplicates 0), none before
 * its due time, and a's runs within the takeover time plus slack of their
 * due time, well inside their lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type DeliveredRunInfo, type Worker } from '@timelane/client';
import { TestCluster, sleep } from '../helpers/cluster.js';
import { waitUntil } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';

const TTL = 1_500;
const QUEUE = 'staged-kill';
/** The runs' delivery lease: what a run nobody returned would wait out. */
const LEASE_MS = 30_000;
/** a's runs must fire within this of their due time: takeover (a TTL, membership) plus slack for a busy machine. */
const BOUND_MS = 8_000;

describe('fault: kill -9 while a worker holds staged runs', () => {
  let cluster: TestCluster | undefined;
  let worker: Worker | undefined;
  const starts: { run: DeliveredRunInfo; at: number }[] = [];

  beforeAll(async () => {
    cluster = await TestCluster.start({
      members: ['a', 'b'],
      shardCount: 8,
      leaseTtlMs: TTL,
      membershipIntervalMs: 300,
      // A run is claimed 0.5–1 s before due, and staged at the worker then.
      args: () => ['--claim-ahead-ms', '1000', '--reap-interval-ms', '200'],
    });
  });

  afterAll(async () => {
    if (worker) {
      await worker.close(2_000);
      untrack(worker);
    }
    await cluster?.stopAll();
  });

  it('the dropped runs are handed out again by the new owner at once: each fires once, not before due, long before its lease ends', async () => {
    const c = cluster!;
    expect(await c.waitAllShardsOwned(20_000, ['a', 'b']), 'every shard owned').not.toBeNull();
    const owners = async () => new Map((await c.shardRows()).map((r) => [r.shard, r.owner]));
    for (let i = 0; i < 100 && ![...(await owners()).values()].includes('a'); i++) await sleep(100);

    worker = track(
      createWorker({
        address: [c.daemon('a').address, c.daemon('b').address],
        queues: [QUEUE],
        concurrency: 500,
        stageAheadMs: 1_000,
        reconnectInitialMs: 50,
        reconnectMaxMs: 300,
        onError: () => undefined, // a's stream ends with an error
        handler: (run) => void starts.push({ run, at: Date.now() }),
      }),
      'staged-kill worker',
    );
    await sleep(500); // both streams open

    const dueAt = Date.now() + 4_000;
    const scheduled = await c.client('b').scheduleBatch(Array.from({ length: 64 }, (_, i) => ({ queue: QUEUE, at: dueAt + i, leaseMs: LEASE_MS })));
    const byShard = await owners();
    const onA = scheduled.filter((s) => byShard.get(s.run.shard) === 'a').map((s) => s.run.id);
    expect(onA.length, 'some runs on a’s shards').toBeGreaterThan(0);

    // Kill a while the worker holds its runs: claimed by a (0.5–1 s before due), handed over at once, not due yet.
    const claimed = async () => {
      const { rows } = await c.pool.query<{ n: string }>(`SELECT count(*) AS n FROM runs WHERE id = ANY($1::int8[]) AND status = 'fired'`, [onA]);
      return Number(rows[0].n) === onA.length;
    };
    expect(await waitUntil(claimed, 4_000, 5), 'a claimed its runs').toBe(true);
    // Every run (a's and b's, all claimed in that window) reached the worker: a's are among them.
    expect(await waitUntil(() => worker!.stats.received >= scheduled.length, 1_000, 5), 'the worker holds them').toBe(true);
    expect(Date.now(), 'killed before the runs are due').toBeLessThan(dueAt - 100);
    await c.killMember('a');

    const ids = scheduled.map((s) => s.run.id);
    expect(await waitUntil(() => ids.every((id) => starts.some((s) => s.run.runId === id)), 20_000, 20)).toBe(true);
    await sleep(500); // a duplicate, if any, would come now
    const counts = new Map<string, number>();
    for (const s of starts) counts.set(s.run.runId, (counts.get(s.run.runId) ?? 0) + 1);
    const lost = ids.filter((id) => !counts.has(id));
    const duplicated = ids.filter((id) => (counts.get(id) ?? 0) > 1);
    console.log(`[staged-kill] ${JSON.stringify({ scheduled: ids.length, onA: onA.length, fired: counts.size, lost: lost.length, duplicated: duplicated.length })}`);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    for (const s of starts) expect(s.at).toBeGreaterThanOrEqual(s.run.dueAtMs);
    // a's runs ran as their second hand-out: a's was dropped at the worker, b handed them out again.
    const ranA = starts.filter((s) => onA.includes(s.run.runId));
    expect(ranA.map((s) => s.run.delivery).every((d) => d === 2)).toBe(true);
    // Before: a's runs waited out their 30 s lease after the kill.
    const lateness = ranA.map((s) => s.at - s.run.dueAtMs);
    expect(Math.max(...lateness)).toBeLessThan(BOUND_MS);
  });
});
