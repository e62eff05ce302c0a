/**
 * A renewal round must not hold the event loop: the daemon's fire timers share
 * it, and an extend costs the Redis backend ~0.1 ms of synchronous work, so
 * one turn extending 64 shards delayed due runs by 5-10 ms every ttl/3. The
 * backend here is an in-memory fake that logs its calls; what is checked is
 * the order of calls against a probe queued on the event loop, not time.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaseBackend, ShardLease } from '../../daemon/coord/lease.js';
import { ShardLeaseManager } from '../../daemon/coord/shard-leases.js';
import { silentLogger } from '../../daemon/log.js';

const SHARDS = 64;
const TTL_MS = 300;
const VALID_MS = 60_000;

class LoggingBackend implements LeaseBackend {
  readonly kind = 'redis' as const;
  readonly events: string[] = [];
  /** Called on each extend, after it is logged. */
  onExtend: (shard: number) => void = () => undefined;

  // Valid for a minute, whatever the TTL: a stalled test process must not see its leases run out
  // (they would be dropped, not extended, and the round these tests wait for would never come).
  acquire(shard: number): Promise<ShardLease | null> {
    return Promise.resolve({ shard, fence: 1, validUntilMono: performance.now() + VALID_MS });
  }

  extend(lease: ShardLease): Promise<boolean> {
    this.events.push(`extend ${lease.shard}`);
    lease.validUntilMono = performance.now() + VALID_MS;
    this.onExtend(lease.shard);
    return Promise.resolve(true);
  }

  release(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A started manager over `backend` that holds all SHARDS shards. */
async function holdingEveryShard(backend: LeaseBackend, onLost: (shard: number) => void = () => undefined): Promise<ShardLeaseManager> {
  const m = new ShardLeaseManager(backend, { ttlMs: TTL_MS, log: silentLogger }, { onAcquired: () => undefined, onLost });
  m.setDesired(Array.from({ length: SHARDS }, (_, s) => s));
  m.start();
  await m.acquireNow();
  return m;
}

describe('ShardLeaseManager renewal rounds', () => {
  let manager: ShardLeaseManager | undefined;
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });

  it('extends every held shard once per round, a few per turn of the event loop', async () => {
    const backend = new LoggingBackend();
    manager = await holdingEveryShard(backend);
    expect(manager.ownedShards()).toHaveLength(SHARDS);

    // The first extend of the next round queues a probe on the event loop;
    // the round is over when every shard has been extended once.
    const roundDone = new Promise<void>((resolve) => {
      let extended = 0;
      backend.onExtend = () => {
        if (extended++ === 0) setImmediate(() => backend.events.push('probe'));
        if (extended === SHARDS) resolve();
      };
    });
    const from = backend.events.length;
    await roundDone;
    const round = backend.events.slice(from);
    const probeAt = round.indexOf('probe');

    expect(new Set(round.filter((e) => e !== 'probe'))).toEqual(new Set(Array.from({ length: SHARDS }, (_, s) => `extend ${s}`)));
    // Before the change all 64 extends ran in one turn: the round was over before the probe ran.
    expect(probeAt).toBeGreaterThan(0);
    expect(probeAt).toBeLessThanOrEqual(8);
    expect(manager.ownedShards()).toHaveLength(SHARDS);
  }, 10_000);

  it('a shard dropped in the middle of a round is not extended by its later turns', async () => {
    const backend = new LoggingBackend();
    const lost: number[] = [];
    manager = await holdingEveryShard(backend, (s) => lost.push(s));

    const roundDone = new Promise<void>((resolve) => {
      let extended = 0;
      backend.onExtend = () => {
        if (extended++ === 0) manager?.drop(SHARDS - 1, 'stale fence');
        if (extended === SHARDS - 1) resolve();
      };
    });
    const from = backend.events.length;
    await roundDone;
    for (let i = 0; i < SHARDS; i++) await new Promise((r) => setImmediate(r));
    const extended = backend.events.slice(from).filter((e) => e.startsWith('extend'));
    expect(lost).toEqual([SHARDS - 1]);
    expect(extended).not.toContain(`extend ${SHARDS - 1}`);
    expect(extended).toHaveLength(SHARDS - 1);
  }, 10_000);

  it('stop() in the middle of a round starts no further extends', async () => {
    const backend = new LoggingBackend();
    manager = await holdingEveryShard(backend);

    const stopped = new Promise<void>((resolve) => {
      let extended = 0;
      backend.onExtend = () => {
        if (extended++ === 0) void manager?.stop().then(resolve);
      };
    });
    const from = backend.events.length;
    await stopped;
    // Let every turn the round had queued run (each queues at most one more).
    for (let i = 0; i < SHARDS; i++) await new Promise((r) => setImmediate(r));
    // Before the change the round went on over its snapshot: all 64 extended after stop().
    expect(backend.events.slice(from).filter((e) => e.startsWith('extend'))).toHaveLength(1);
  }, 10_000);
});
