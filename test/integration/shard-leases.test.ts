/**
 * ShardLeaseManager over both lease backends: acquiring the desired set,
 * exclusivity between two managers through handoffs, graceful release on
 * stop() and setDesired(), dropping a shard on the first failed extend, on a
 * (simulated) pause past the lease, and on drop(). Each test uses its own
 * block of shards; time bounds are in TTLs and deliberately loose.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { LeaseBackend, ShardLease } from '../../daemon/coord/lease.js';
import { RedisLeaseBackend } from '../../daemon/coord/redis-lease.js';
import { PostgresLeaseBackend } from '../../daemon/coord/pg-lease.js';
import {
  LOST_EXPIRED,
  LOST_EXTEND_FAILED,
  LOST_HOOK_FAILED,
  LOST_RELEASED,
  ShardLeaseManager,
  type ShardLeaseHooks,
} from '../../daemon/coord/shard-leases.js';
import { silentLogger } from '../../daemon/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';

interface Harness {
  db: TestDatabase;
  make(memberId: string): LeaseBackend;
  /** Makes the shard's current lease lapse in the store, as a partition or a long pause would. */
  expireInStore(shard: number): Promise<void>;
  close(): Promise<void>;
}

async function redisHarness(): Promise<Harness> {
  const db = await createTestDatabase(64);
  const prefix = redisPrefix();
  const clients: Redis[] = [];
  const backends: LeaseBackend[] = [];
  const client = (): Redis => track(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 }), 'redis client');
  const admin = client();
  clients.push(admin);
  return {
    db,
    make(memberId) {
      const redis = client();
      clients.push(redis);
      const b = new RedisLeaseBackend({ redis, leaseDb: db.pool, prefix, memberId, log: silentLogger });
      backends.push(b);
      return b;
    },
    async expireInStore(shard) {
      await admin.del(`${prefix}lease:${shard}`);
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
  const db = await createTestDatabase(64);
  const backends: LeaseBackend[] = [];
  return {
    db,
    make(memberId) {
      const b = new PostgresLeaseBackend({ leaseDb: db.pool, memberId, log: silentLogger });
      backends.push(b);
      return b;
    },
    async expireInStore(shard) {
      await db.pool.query('UPDATE shards SET lease_expires_at = now() WHERE shard = $1', [shard]);
    },
    async close() {
      await Promise.all(backends.map((b) => b.close()));
      await db.drop();
    },
  };
}

type HookEvent =
  | { kind: 'acquired'; shard: number; fence: number }
  | { kind: 'lost'; shard: number; reason: string }
  | { kind: 'released'; shard: number };

const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now();
  while (!(await cond())) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
  return performance.now() - start;
}

/** Counts extend calls per shard and lets a test see when they started. */
class SpyBackend implements LeaseBackend {
  readonly extends: Array<{ shard: number; at: number }> = [];
  constructor(private readonly inner: LeaseBackend) {}
  get kind(): LeaseBackend['kind'] {
    return this.inner.kind;
  }
  acquire(shard: number, ttlMs: number): Promise<ShardLease | null> {
    return this.inner.acquire(shard, ttlMs);
  }
  extend(lease: ShardLease, ttlMs: number): Promise<boolean> {
    this.extends.push({ shard: lease.shard, at: performance.now() });
    return this.inner.extend(lease, ttlMs);
  }
  release(lease: ShardLease): Promise<void> {
    return this.inner.release(lease);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const factories = [
  { name: 'redis', setup: redisHarness },
  { name: 'postgres', setup: postgresHarness },
] as const;

describe.each(factories)('ShardLeaseManager over the $name backend', ({ setup }) => {
  const TTL = 1_000;
  let h: Harness;
  let backendA: LeaseBackend;
  let backendB: LeaseBackend;
  let thief: LeaseBackend;
  const managers: ShardLeaseManager[] = [];

  beforeAll(async () => {
    h = await setup();
    backendA = h.make('member-a');
    backendB = h.make('member-b');
    thief = h.make('member-thief');
  });
  afterEach(async () => {
    await Promise.all(
      managers.splice(0).map(async (m) => {
        await m.stop();
        untrack(m);
      }),
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  function manager(
    backend: LeaseBackend,
    opts: { ttlMs?: number; clock?: () => number; onAcquired?: ShardLeaseHooks['onAcquired'] } = {},
  ): { m: ShardLeaseManager; events: HookEvent[] } {
    const events: HookEvent[] = [];
    const m = new ShardLeaseManager(
      backend,
      { ttlMs: opts.ttlMs ?? TTL, log: silentLogger, clock: opts.clock },
      {
        onAcquired(lease) {
          events.push({ kind: 'acquired', shard: lease.shard, fence: lease.fence });
          return opts.onAcquired?.(lease);
        },
        onLost(shard, reason) {
          events.push({ kind: 'lost', shard, reason });
        },
        onReleased(shard) {
          events.push({ kind: 'released', shard });
        },
      },
    );
    managers.push(track(m, 'shard lease manager'));
    return { m, events };
  }

  const lost = (events: HookEvent[], shard: number): string[] =>
    events.flatMap((e) => (e.kind === 'lost' && e.shard === shard ? [e.reason] : []));

  async function rows(shards: number[]): Promise<Map<number, { fence: number; owner: string | null }>> {
    const { rows: rs } = await h.db.pool.query<{ shard: number; fence: number; owner: string | null }>(
      'SELECT shard, fence, owner FROM shards WHERE shard = ANY($1::int[])',
      [shards],
    );
    return new Map(rs.map((r) => [r.shard, { fence: r.fence, owner: r.owner }]));
  }

  it('holds every desired shard within a couple of TTLs, keeps them through renewals, releases on stop()', async () => {
    // A longer TTL than the other cases: an extend (or event-loop stall) must exceed ~1.7 s, not ~0.6 s, to lose a shard here.
    const ttlMs = 3_000;
    const ROUNDS = 7; // renewal rounds (every ttl/3) to sit through: as many as 2.5 TTLs of 1 s gave
    const shards = range(0, 8);
    const spy = new SpyBackend(backendA);
    const { m, events } = manager(spy, { ttlMs });
    m.setDesired(shards);
    m.start();
    await waitFor(() => m.ownedShards().length === 8, 3 * ttlMs, 'all 8 shards held');
    const heldAt = performance.now();
    expect(m.ownedShards()).toEqual(shards);
    expect(shards.every((s) => m.isValid(s))).toBe(true);
    const fences = new Map(m.owned().map((l) => [l.shard, l.fence]));
    for (const [shard, row] of await rows(shards)) expect(row).toEqual({ fence: fences.get(shard), owner: 'member-a' });
    expect(events.filter((e) => e.kind === 'acquired')).toHaveLength(8);

    // Several renewal rounds, counted rather than slept for: every shard extended ROUNDS times.
    const extendsOf = (s: number): number => spy.extends.filter((e) => e.shard === s).length;
    await waitFor(() => shards.every((s) => extendsOf(s) >= ROUNDS), (ROUNDS + 3) * (ttlMs / 3), `${ROUNDS} renewal rounds`);
    // Held past a whole TTL: without the extends every lease would have lapsed, here and in the store.
    expect(performance.now() - heldAt).toBeGreaterThan(ttlMs);
    expect(m.ownedShards()).toEqual(shards);
    expect(events.filter((e) => e.kind === 'lost')).toEqual([]);
    for (const s of shards) expect(m.fenceOf(s)).toBe(fences.get(s));
    expect(shards.every((s) => m.isValid(s))).toBe(true);
    for (const s of shards) expect(await backendB.acquire(s, ttlMs), `shard ${s} still held in the store`).toBeNull();

    // Narrowing the desired set releases at once.
    m.setDesired(range(0, 4));
    expect(m.ownedShards()).toEqual(range(0, 4));
    for (const s of range(4, 4)) expect(lost(events, s)).toEqual([LOST_RELEASED]);
    await waitFor(async () => [...(await rows(range(4, 4))).values()].every((r) => r.owner === null), ttlMs, 'released rows free');

    await m.stop();
    expect(m.ownedShards()).toEqual([]);
    for (const s of range(0, 4)) expect(lost(events, s)).toEqual([LOST_RELEASED]);
    // onReleased follows onLost once the lease is given back (stop() waits for it).
    const order = events.filter((e) => e.kind !== 'acquired').map((e) => `${e.kind}:${e.shard}`);
    for (const s of shards) expect(order.indexOf(`released:${s}`)).toBeGreaterThan(order.indexOf(`lost:${s}`));
    for (const row of (await rows(shards)).values()) expect(row.owner).toBeNull();
  });

  it('two managers with overlapping desired sets never both hold a shard, through handoffs', async () => {
    const all = range(8, 12); // 8..19
    const one = manager(backendA);
    const two = manager(backendB);
    const violations: number[] = [];
    const watcher = setInterval(() => {
      for (const s of all) if (one.m.isOwned(s) && two.m.isOwned(s)) violations.push(s);
    }, 2);
    try {
      one.m.setDesired(range(8, 8)); // 8..15
      two.m.setDesired(range(12, 8)); // 12..19
      one.m.start();
      two.m.start();
      const covered = (): boolean => all.every((s) => one.m.isOwned(s) || two.m.isOwned(s));
      await waitFor(covered, 3 * TTL, 'every shard held by someone');
      await sleep(1.5 * TTL);

      // Handoff: one gives up 12..15, two picks them up.
      one.m.setDesired(range(8, 4));
      await waitFor(() => range(12, 8).every((s) => two.m.isOwned(s)), 3 * TTL, 'two holds 12..19');
      // And back: two narrows, one widens again.
      two.m.setDesired(range(16, 4));
      one.m.setDesired(range(8, 8));
      await waitFor(() => range(8, 8).every((s) => one.m.isOwned(s)), 3 * TTL, 'one holds 8..15');
      await sleep(0.5 * TTL);
      expect(covered()).toBe(true);

      // Postgres agrees with what each manager believes.
      for (const [shard, row] of await rows(all)) {
        const holder = one.m.isOwned(shard) ? one.m : two.m;
        expect(row).toEqual({ fence: holder.fenceOf(shard), owner: holder === one.m ? 'member-a' : 'member-b' });
      }
    } finally {
      clearInterval(watcher);
    }
    expect(violations).toEqual([]);
  });

  it('stop() releases so a waiting manager takes over well within a TTL', async () => {
    const ttlMs = 3_000;
    const shards = range(24, 4);
    const first = manager(backendA, { ttlMs });
    first.m.setDesired(shards);
    first.m.start();
    await waitFor(() => first.m.ownedShards().length === 4, 2 * ttlMs, 'first holds all');
    const second = manager(backendB, { ttlMs });
    second.m.setDesired(shards);
    second.m.start();
    await second.m.acquireNow();
    expect(second.m.ownedShards()).toEqual([]);

    const started = performance.now();
    await first.m.stop();
    const took = await waitFor(() => second.m.ownedShards().length === 4, ttlMs, 'second takes over');
    expect(performance.now() - started).toBeLessThan(ttlMs);
    expect(took).toBeLessThan(ttlMs);
  });

  it('a lease lost in the store is dropped on the first failed extend, and won back after', async () => {
    const shard = 32;
    const { m, events } = manager(backendA);
    m.setDesired([shard]);
    m.start();
    await waitFor(() => m.isOwned(shard), 2 * TTL, 'held');
    const before = m.fenceOf(shard) as number;

    await h.expireInStore(shard);
    const stolen = await thief.acquire(shard, 60_000);
    expect(stolen).not.toBeNull();
    expect(stolen?.fence).toBeGreaterThan(before);

    await waitFor(() => !m.isOwned(shard), 2 * TTL, 'dropped');
    expect(lost(events, shard)).toEqual([LOST_EXTEND_FAILED]);
    await sleep(TTL / 2);
    expect(m.isOwned(shard)).toBe(false); // the thief holds it

    await thief.release(stolen as ShardLease);
    await waitFor(() => m.isOwned(shard), 2 * TTL, 're-acquired');
    expect(m.fenceOf(shard)).toBeGreaterThan(stolen?.fence ?? Infinity);
  });

  it('after a pause past the lease it drops the shard on wake without trying to extend', async () => {
    const shard = 40;
    let pausedFor = 0; // what a SIGSTOP would add to the monotonic clock
    const spy = new SpyBackend(backendA);
    const { m, events } = manager(spy, { clock: () => performance.now() + pausedFor });
    m.setDesired([shard]);
    m.start();
    await waitFor(() => m.isOwned(shard), 2 * TTL, 'held');
    await waitFor(() => spy.extends.length > 0, 2 * TTL, 'a renewal');
    const fence = m.fenceOf(shard) as number;

    pausedFor = 5 * TTL;
    const wokeAt = performance.now();
    expect(m.isValid(shard)).toBe(false); // cannot prove the lease any more
    await waitFor(() => lost(events, shard).length > 0, TTL, 'dropped on wake');
    expect(lost(events, shard)).toEqual([LOST_EXPIRED]);
    expect(spy.extends.filter((e) => e.at >= wokeAt)).toEqual([]);

    pausedFor = 0;
    await waitFor(() => m.isOwned(shard), 2 * TTL, 're-acquired after the pause');
    expect(m.fenceOf(shard)).toBeGreaterThan(fence);
    expect(m.isValid(shard)).toBe(true);
  });

  it('drop() reports onLost, releases, and the shard comes back under a new fence', async () => {
    const shard = 48;
    const { m, events } = manager(backendA);
    m.setDesired([shard]);
    m.start();
    await waitFor(() => m.isOwned(shard), 2 * TTL, 'held');
    const fence = m.fenceOf(shard) as number;
    m.drop(shard, 'stale fence');
    expect(m.isOwned(shard)).toBe(false);
    expect(lost(events, shard)).toEqual(['stale fence']);
    await waitFor(() => m.isOwned(shard), 2 * TTL, 're-acquired');
    expect(m.fenceOf(shard)).toBeGreaterThan(fence);
    m.drop(999, 'not held'); // no-op
    expect(lost(events, 999)).toEqual([]);
  });

  it('a failing onAcquired drops the shard, which is retried', async () => {
    const shard = 56;
    let failures = 1;
    const { m, events } = manager(backendA, {
      async onAcquired() {
        if (failures-- > 0) throw new Error('window load failed');
      },
    });
    m.setDesired([shard]);
    m.start();
    await waitFor(() => events.filter((e) => e.kind === 'acquired').length === 2 && m.isOwned(shard), 3 * TTL, 'second acquisition');
    expect(lost(events, shard)).toEqual([LOST_HOOK_FAILED]);
    const [firstFence, secondFence] = events.flatMap((e) => (e.kind === 'acquired' ? [e.fence] : []));
    expect(secondFence).toBeGreaterThan(firstFence);
  });

  it('rejects a bad TTL', () => {
    expect(() => new ShardLeaseManager(backendA, { ttlMs: 0, log: silentLogger }, { onAcquired: () => undefined, onLost: () => undefined })).toThrow(/ttlMs/);
  });
});

/** A private, disk-less redis-server on a free port (restarts empty, like the test servers). */
class PrivateRedis {
  private proc: ChildProcess | undefined;
  constructor(readonly port: number) {}

  static async freePort(): Promise<number> {
    const srv = createServer();
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    const addr = srv.address();
    srv.close();
    if (addr === null || typeof addr === 'string') throw new Error('no port');
    return addr.port;
  }

  async start(): Promise<void> {
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.proc = track(proc, `redis-server :${this.port}`);
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.includes('Ready to accept connections'), 10_000, 'redis-server ready');
  }

  /** SIGSTOP / SIGCONT: Redis hangs without closing connections. */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void {
    this.proc?.kill(sig);
  }

  async kill(): Promise<void> {
    const proc = this.proc;
    if (proc === undefined) return;
    this.proc = undefined;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await once(proc, 'exit');
    }
    untrack(proc);
  }
}

describe('ShardLeaseManager over a private redis-server that dies, restarts empty and hangs', () => {
  const TTL = 1_000;
  let db: TestDatabase;
  let server: PrivateRedis;
  let redis: Redis;
  let backend: RedisLeaseBackend;
  let m: ShardLeaseManager | undefined;

  beforeAll(async () => {
    db = await createTestDatabase(8);
    server = new PrivateRedis(await PrivateRedis.freePort());
    await server.start();
    // Fail fast while disconnected, reconnect quickly.
    redis = track(new Redis({ port: server.port, maxRetriesPerRequest: 1, retryStrategy: () => 100 }), 'redis client');
    redis.on('error', () => undefined);
    backend = new RedisLeaseBackend({ redis, leaseDb: db.pool, prefix: 'tl:', memberId: 'member-a', log: silentLogger });
  });
  afterAll(async () => {
    if (m) {
      await m.stop();
      untrack(m);
    }
    await backend?.close();
    if (redis) {
      redis.disconnect();
      untrack(redis);
    }
    await server?.kill();
    await db?.drop();
  });

  it('drops every shard while Redis is down, and owns them again with fences past Postgres once it is back', async () => {
    const shards = range(0, 4);
    const events: HookEvent[] = [];
    m = track(
      new ShardLeaseManager(
        backend,
        { ttlMs: TTL, log: silentLogger },
        {
          onAcquired: (lease) => void events.push({ kind: 'acquired', shard: lease.shard, fence: lease.fence }),
          onLost: (shard, reason) => void events.push({ kind: 'lost', shard, reason }),
        },
      ),
      'shard lease manager',
    );
    const mgr = m;
    mgr.setDesired(shards);
    mgr.start();
    await waitFor(() => mgr.ownedShards().length === 4, 3 * TTL, 'all held');
    const before = new Map(mgr.owned().map((l) => [l.shard, l.fence]));

    await server.kill();
    await waitFor(() => shards.every((s) => !mgr.isValid(s)), 2 * TTL, 'no lease provable');
    await waitFor(() => mgr.ownedShards().length === 0, 2 * TTL, 'all dropped');
    for (const s of shards) expect(events.some((e) => e.kind === 'lost' && e.shard === s)).toBe(true);

    await server.start(); // empty: lease keys and fence counters are gone
    await waitFor(() => mgr.ownedShards().length === 4, 5 * TTL, 'all held again');
    const { rows } = await db.pool.query<{ shard: number; fence: number }>('SELECT shard, fence FROM shards WHERE shard = ANY($1::int[])', [shards]);
    for (const row of rows) {
      expect(row.fence).toBeGreaterThan(before.get(row.shard) as number);
      expect(mgr.fenceOf(row.shard)).toBe(row.fence);
    }
  });

  it('drops every shard when Redis hangs (extends time out at the lease validity), and recovers after', async () => {
    const mgr = m as ShardLeaseManager; // still running from the previous test, holding 0..3
    await waitFor(() => mgr.ownedShards().length === 4, 3 * TTL, 'all held');
    const before = new Map(mgr.owned().map((l) => [l.shard, l.fence]));
    server.signal('SIGSTOP');
    try {
      const took = await waitFor(() => mgr.ownedShards().length === 0, 3 * TTL, 'all dropped while Redis hangs');
      expect(took).toBeLessThan(3 * TTL);
      expect(mgr.owned()).toEqual([]);
    } finally {
      server.signal('SIGCONT');
    }
    await waitFor(() => mgr.ownedShards().length === 4, 5 * TTL, 'all held again');
    for (const l of mgr.owned()) expect(l.fence).toBeGreaterThan(before.get(l.shard) as number);
  });
});
