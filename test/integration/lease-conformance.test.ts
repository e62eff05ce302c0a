/**
 * One conformance suite for every LeaseBackend (redis, postgres): the lease is
 * exclusive, tokens only move forward and are recorded in Postgres before
 * acquire returns, release/expiry hand the shard over, a superseded holder can
 * neither extend nor write, and nothing throws when a store is unreachable.
 * Redis-only cases cover I-2 (Redis restarting empty); Postgres-only cases the
 * restarted-member re-acquire. Each test uses its own shard.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { LeaseBackend, ShardLease } from '../../daemon/coord/lease.js';
import { RedisLeaseBackend } from '../../daemon/coord/redis-lease.js';
import { PostgresLeaseBackend } from '../../daemon/coord/pg-lease.js';
import { SELECT_FENCE, type FenceRow } from '../../daemon/coord/fence-queries.js';
import { createPool, type Db } from '../../daemon/db/pool.js';
import { silentLogger } from '../../daemon/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';

interface Harness {
  db: TestDatabase;
  /** A backend for `memberId`; `pool` overrides the Postgres pool (e.g. an unreachable one). */
  make(memberId: string, pool?: Db): LeaseBackend;
  close(): Promise<void>;
}

interface RedisHarness extends Harness {
  prefix: string;
  admin: Redis;
  /** A backend whose Redis is unreachable (nothing listens; commands fail fast). */
  makeUnreachable(memberId: string): LeaseBackend;
}

async function redisHarness(): Promise<RedisHarness> {
  const db = await createTestDatabase(32);
  const prefix = redisPrefix();
  const clients: Redis[] = [];
  const backends: LeaseBackend[] = [];
  const client = (c: Redis): Redis => {
    clients.push(track(c, 'redis client'));
    return c;
  };
  const admin = client(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 }));
  const keep = (b: LeaseBackend): LeaseBackend => (backends.push(b), b);
  return {
    db,
    prefix,
    admin,
    make: (memberId, pool = db.pool) =>
      keep(new RedisLeaseBackend({ redis: client(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 })), leaseDb: pool, prefix, memberId, log: silentLogger })),
    makeUnreachable: (memberId) => {
      const dead = client(new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null }));
      dead.on('error', () => undefined); // ECONNREFUSED is the point of this client
      return keep(new RedisLeaseBackend({ redis: dead, leaseDb: db.pool, prefix, memberId, log: silentLogger }));
    },
    async close() {
      await Promise.all(backends.map((b) => b.close()));
      for (const c of clients) {
        c.disconnect();
        untrack(c);
      }
      await deleteRedisPrefix(prefix);
      await db.drop();
    },
  };
}

async function postgresHarness(): Promise<Harness> {
  const db = await createTestDatabase(32);
  const backends: LeaseBackend[] = [];
  return {
    db,
    make: (memberId, pool = db.pool) => {
      const b = new PostgresLeaseBackend({ leaseDb: pool, memberId, log: silentLogger });
      backends.push(b);
      return b;
    },
    async close() {
      await Promise.all(backends.map((b) => b.close()));
      await db.drop();
    },
  };
}

async function shardRow(db: Db, shard: number): Promise<{ fence: number; owner: string | null }> {
  const { rows } = await db.query<{ fence: number; owner: string | null }>('SELECT fence, owner FROM shards WHERE shard = $1', [shard]);
  return rows[0];
}

async function pgFence(db: Db, shard: number): Promise<number> {
  const { rows } = await db.query<FenceRow>(SELECT_FENCE, [shard]);
  return rows[0].fence;
}

function held(lease: ShardLease | null): ShardLease {
  expect(lease).not.toBeNull();
  return lease as ShardLease;
}

/** A pool whose server does not exist: every query fails with ECONNREFUSED. */
function unreachablePool(): Db {
  return createPool({ url: 'postgres://postgres@127.0.0.1:1/none', schema: 'timelane', poolSize: 1 });
}

const factories = [
  { name: 'redis', setup: redisHarness },
  { name: 'postgres', setup: postgresHarness },
] as const;

describe.each(factories)('$name lease backend conformance', ({ name, setup }) => {
  let h: Harness;
  let a: LeaseBackend;
  let b: LeaseBackend;

  beforeAll(async () => {
    h = await setup();
    a = h.make('member-a');
    b = h.make('member-b');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('reports its kind', () => {
    expect(a.kind).toBe(name);
  });

  it('acquire returns a fence already recorded in Postgres, with the owner', async () => {
    const before = performance.now();
    const lease = held(await a.acquire(0, 5_000));
    expect(lease.shard).toBe(0);
    expect(lease.fence).toBeGreaterThan(0);
    expect(lease.validUntilMono).toBeGreaterThan(before);
    expect(lease.validUntilMono).toBeLessThanOrEqual(performance.now() + 5_000);
    expect(await shardRow(h.db.pool, 0)).toEqual({ fence: lease.fence, owner: 'member-a' });
    await a.release(lease);
  });

  it('a held shard cannot be acquired by a peer, and the recorded fence does not move', async () => {
    const lease = held(await a.acquire(1, 5_000));
    expect(await b.acquire(1, 5_000)).toBeNull();
    expect(await shardRow(h.db.pool, 1)).toEqual({ fence: lease.fence, owner: 'member-a' });
    await a.release(lease);
  });

  it('fences strictly increase across acquisitions, and release marks the shard free', async () => {
    const f1 = held(await a.acquire(2, 5_000));
    await a.release(f1);
    expect((await shardRow(h.db.pool, 2)).owner).toBeNull();
    const f2 = held(await b.acquire(2, 5_000));
    expect(f2.fence).toBeGreaterThan(f1.fence);
    await b.release(f2);
    const f3 = held(await a.acquire(2, 5_000));
    expect(f3.fence).toBeGreaterThan(f2.fence);
    expect(await pgFence(h.db.pool, 2)).toBe(f3.fence);
    await a.release(f3);
    expect(await shardRow(h.db.pool, 2)).toEqual({ fence: f3.fence, owner: null });
  });

  it('release lets a peer acquire at once (long TTL)', async () => {
    const lease = held(await a.acquire(3, 60_000));
    await a.release(lease);
    const peer = held(await b.acquire(3, 60_000));
    expect(peer.fence).toBeGreaterThan(lease.fence);
    await b.release(peer);
  });

  it('after the TTL passes without extend, a peer acquires and the old holder cannot extend', async () => {
    const old = held(await a.acquire(4, 300));
    await sleep(700);
    const peer = held(await b.acquire(4, 5_000));
    expect(peer.fence).toBeGreaterThan(old.fence);
    expect(await a.extend(old, 5_000)).toBe(false);
    // The peer still holds it.
    expect(await a.acquire(4, 5_000)).toBeNull();
    expect(await shardRow(h.db.pool, 4)).toEqual({ fence: peer.fence, owner: 'member-b' });
    await b.release(peer);
  });

  it('an expired lease cannot be extended even when nobody took it', async () => {
    const lease = held(await a.acquire(5, 300));
    await sleep(700);
    expect(await a.extend(lease, 5_000)).toBe(false);
    await a.release(lease);
  });

  it('extend keeps the shard held past the original TTL and moves validity forward', async () => {
    const ORIGINAL_TTL = 1_500;
    // Extended far beyond the original TTL: the peer's refusal below cannot race the extended lease on a loaded machine.
    const EXTENDED_TTL = 10_000;
    const lease = held(await a.acquire(6, ORIGINAL_TTL));
    const acquiredAt = performance.now(); // the store set the original expiry before this
    const firstValidity = lease.validUntilMono;
    expect(await a.extend(lease, EXTENDED_TTL)).toBe(true);
    expect(lease.validUntilMono).toBeGreaterThan(firstValidity);
    // Past the original expiry (+ slack for the store's clock): without the extend the shard would be free now.
    await sleep(Math.max(0, acquiredAt + ORIGINAL_TTL + 100 - performance.now()));
    expect(performance.now()).toBeGreaterThan(acquiredAt + ORIGINAL_TTL);
    expect(await b.acquire(6, 5_000)).toBeNull();
    // Same TTL, later start: validity is restamped from the time of each extend.
    const secondValidity = lease.validUntilMono;
    expect(await a.extend(lease, EXTENDED_TTL)).toBe(true);
    expect(lease.validUntilMono).toBeGreaterThan(secondValidity);
    expect(await shardRow(h.db.pool, 6)).toEqual({ fence: lease.fence, owner: 'member-a' });
    await a.release(lease);
  });

  it('after a takeover the old token matches no fenced write, and its release frees nothing', async () => {
    const old = held(await a.acquire(7, 300));
    await sleep(700);
    const peer = held(await b.acquire(7, 5_000));
    const fenced = 'UPDATE shards SET acquired_at = acquired_at WHERE shard = $1 AND fence = $2';
    expect((await h.db.pool.query(fenced, [7, old.fence])).rowCount).toBe(0);
    expect((await h.db.pool.query(fenced, [7, peer.fence])).rowCount).toBe(1);
    await a.release(old);
    expect(await shardRow(h.db.pool, 7)).toEqual({ fence: peer.fence, owner: 'member-b' });
    expect(await a.acquire(7, 5_000)).toBeNull();
    await b.release(peer);
  });

  it('extend and release of a lease this backend never granted are refused quietly', async () => {
    const bogus: ShardLease = { shard: 8, fence: 12345, validUntilMono: performance.now() + 5_000 };
    expect(await a.extend(bogus, 5_000)).toBe(false);
    await a.release(bogus);
    const lease = held(await b.acquire(8, 5_000));
    expect(await a.extend({ ...lease }, 5_000)).toBe(false);
    await b.release(lease);
  });

  it('an unreachable Postgres means no lease: acquire resolves null and nothing throws', async () => {
    const pool = unreachablePool();
    try {
      const c = h.make('member-c', pool);
      expect(await c.acquire(9, 5_000)).toBeNull();
      expect(await c.extend({ shard: 9, fence: 1, validUntilMono: performance.now() + 5_000 }, 5_000)).toBe(false);
      await c.release({ shard: 9, fence: 1, validUntilMono: 0 });
      // Nothing was left behind: a healthy peer takes the shard at once.
      const lease = held(await a.acquire(9, 5_000));
      await a.release(lease);
    } finally {
      await pool.end();
    }
  });

  it('a shard that does not exist cannot be acquired', async () => {
    expect(await a.acquire(10_000, 5_000)).toBeNull();
  });
});

describe('redis lease backend: Redis may forget (I-2)', () => {
  let h: RedisHarness;
  let a: LeaseBackend;
  let b: LeaseBackend;

  beforeAll(async () => {
    h = await redisHarness();
    a = h.make('member-a');
    b = h.make('member-b');
  });
  afterAll(async () => {
    await h?.close();
  });

  const fenceKey = (shard: number): string => `${h.prefix}fence:${shard}`;

  it('after Redis restarts empty, the next fence still moves past Postgres (re-seeded)', async () => {
    let last = 0;
    for (let i = 0; i < 3; i++) {
      const lease = held(await a.acquire(0, 5_000));
      last = lease.fence;
      await a.release(lease);
    }
    expect(last).toBeGreaterThanOrEqual(3);
    await deleteRedisPrefix(h.prefix); // Redis restarted with nothing on disk
    expect(await h.admin.get(fenceKey(0))).toBeNull();

    const lease = held(await b.acquire(0, 5_000));
    expect(lease.fence).toBeGreaterThan(last);
    expect(await pgFence(h.db.pool, 0)).toBe(lease.fence);
    const counter = Number(await h.admin.get(fenceKey(0)));
    expect(counter).toBeGreaterThan(last);
    expect(counter).toBeGreaterThanOrEqual(lease.fence);
    // Issuance keeps moving forward from there.
    await b.release(lease);
    const next = held(await a.acquire(0, 5_000));
    expect(next.fence).toBeGreaterThan(lease.fence);
    await a.release(next);
  });

  it('Redis forgetting a held lease: a peer takes over with a higher fence, the old holder cannot extend', async () => {
    const old = held(await a.acquire(1, 5_000));
    await deleteRedisPrefix(h.prefix);
    const peer = held(await b.acquire(1, 5_000));
    expect(peer.fence).toBeGreaterThan(old.fence);
    expect(await a.extend(old, 5_000)).toBe(false);
    expect(await shardRow(h.db.pool, 1)).toEqual({ fence: peer.fence, owner: 'member-b' });
    await a.release(old); // frees nothing of the peer's
    expect(await a.acquire(1, 5_000)).toBeNull();
    await b.release(peer);
  });

  it('a counter that is behind (not reset) is raised past Postgres too', async () => {
    const first = held(await a.acquire(2, 5_000));
    await a.release(first);
    await h.db.pool.query('UPDATE shards SET fence = 500 WHERE shard = 2'); // e.g. Redis restored from an old snapshot
    const lease = held(await b.acquire(2, 5_000));
    expect(lease.fence).toBe(501);
    expect(Number(await h.admin.get(fenceKey(2)))).toBe(501);
    await b.release(lease);
  });

  it('an unreachable Redis means no lease: acquire resolves null, extend false, nothing throws', async () => {
    const c = h.makeUnreachable('member-c');
    expect(await c.acquire(3, 5_000)).toBeNull();
    expect(await c.extend({ shard: 3, fence: 1, validUntilMono: performance.now() + 5_000 }, 5_000)).toBe(false);
    await c.release({ shard: 3, fence: 1, validUntilMono: 0 });
  });

  it('Postgres failing after the Redis lock was taken gives the lock back at once', async () => {
    const pool = unreachablePool();
    try {
      const c = h.make('member-c', pool);
      expect(await c.acquire(4, 60_000)).toBeNull();
      expect(await h.admin.exists(`${h.prefix}lease:4`)).toBe(0);
      const lease = held(await a.acquire(4, 60_000));
      await a.release(lease);
    } finally {
      await pool.end();
    }
  });
});

describe('postgres lease backend: restarted member', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await postgresHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the same member id re-acquires at once with a higher fence; the old lease is dead', async () => {
    const before = h.make('member-a');
    const old = held(await before.acquire(0, 60_000));
    const restarted = h.make('member-a');
    const lease = held(await restarted.acquire(0, 60_000));
    expect(lease.fence).toBe(old.fence + 1);
    expect(await before.extend(old, 60_000)).toBe(false);
    expect(await h.make('member-b').acquire(0, 60_000)).toBeNull();
    await restarted.release(lease);
  });
});
