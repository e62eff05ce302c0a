/**
 * Queue permits in Postgres (daemons without Redis): two daemons' stores on
 * their own pools, racing for the same queue, never grant more than the limit.
 * The sweeper gives back, in either store, the permits of runs no longer fired.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../../daemon/db/pool.js';
import { Redis } from 'ioredis';
import { PermitSweeper, PostgresPermits, QueueLimitsCache, RedisPermits, setQueueLimits, type PermitStore } from '../../daemon/dispatch/queue-limits.js';
import { silentLogger } from '../../daemon/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, scheduleInput } from '../helpers/daemon-parts.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';

let db: TestDatabase;
let other: Db;

beforeAll(async () => {
  db = await createTestDatabase(1);
  other = createPool({ ...db.opts, poolSize: 8 });
});
afterAll(async () => {
  await other?.end();
  await db?.drop();
});

describe('PostgresPermits', () => {
  it('two stores racing grant exactly max_in_flight permits; a released one is granted again', async () => {
    const a = new PostgresPermits(db.pool);
    const b = new PostgresPermits(other);
    const limit = { maxInFlight: 5, maxPerSecond: 0 };
    const now = Date.now();
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).acquire('q', i + 1, limit, now, now + 60_000)));
    const granted = results.map((r, i) => (r === true ? i + 1 : 0)).filter((id) => id > 0);
    expect(granted).toHaveLength(5);
    expect(results.filter((r) => r === 'in_flight')).toHaveLength(19);
    await a.release('q', granted[0]);
    expect(await b.acquire('q', 100, limit, now, now + 60_000)).toBe(true);
    expect(await b.acquire('q', 101, limit, now, now + 60_000)).toBe('in_flight');
    expect(await b.acquire('q', 100, limit, now, now + 60_000)).toBe('shared'); // a holder asking again keeps its one (not its own to give back)
  });

  it('grants at most max_per_second per second, and permits lapse at their end', async () => {
    const a = new PostgresPermits(db.pool);
    const b = new PostgresPermits(other);
    const rate = { maxInFlight: 0, maxPerSecond: 4 };
    const second = Math.floor(Date.now() / 1000) * 1000 + 5_000;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire('r', i + 1, rate, second + 10, second + 60_000)));
    expect(results.filter((r) => r === true)).toHaveLength(4);
    expect(await a.acquire('r', 50, rate, second + 1_000, second + 60_000)).toBe(true); // the next second
    const one = { maxInFlight: 1, maxPerSecond: 0 };
    expect(await a.acquire('l', 1, one, second, second + 100)).toBe(true);
    expect(await b.acquire('l', 2, one, second + 50, second + 1_000)).toBe('in_flight');
    expect(await b.acquire('l', 2, one, second + 100, second + 1_000)).toBe(true);
  });
});

describe('PermitSweeper', () => {
  // Why: a permit was given back only when its delivery settled on the stream holding it. A run answered through
  // another daemon (its own killed -9 holding the permit) kept its permit for PERMIT_MAX_MS, an hour: with every
  // permit so held, the queue handed out nothing for an hour (a hunt).
  const prefix = redisPrefix();
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis?.disconnect();
    await deleteRedisPrefix(prefix);
  });

  const stores: [string, () => PermitStore][] = [
    ['Postgres', () => new PostgresPermits(db.pool)],
    ['Redis', () => new RedisPermits(redis, prefix)],
  ];
  it.each(stores)('gives back, in %s, the permits of runs no longer fired, and keeps the others', async (_name, store) => {
    const queue = `swept-${_name}`;
    const parts = new DaemonParts({ db: db.pool, shardCount: 1 }); // owns no shard: nothing fires
    const made = await parts.scheduling.schedule(Array.from({ length: 3 }, () => scheduleInput(Date.now() + 3_600_000, { queue })));
    await parts.stop();
    const [running, answered, cancelled] = made.map((m) => m.run.id);
    await db.pool.query(`UPDATE runs SET status = 'fired' WHERE id = $1`, [running]);
    await db.pool.query(`UPDATE runs SET status = 'completed' WHERE id = $1`, [answered]);
    await db.pool.query(`UPDATE runs SET status = 'cancelled' WHERE id = $1`, [cancelled]);
    const gone = 987_654_321; // a run that does not exist (any more)

    await setQueueLimits(db.pool, queue, 4, 0);
    const cache = new QueueLimitsCache(db.pool, silentLogger);
    await cache.refresh();
    const permits = store();
    const limit = cache.get(queue)!;
    const now = Date.now();
    for (const id of [running, answered, cancelled, gone]) expect(await permits.acquire(queue, id, limit, now, now + 3_600_000)).toBe(true);
    expect(await permits.acquire(queue, 42, limit, now, now + 3_600_000)).toBe('in_flight'); // full

    expect(await new PermitSweeper(db.pool, cache, permits, silentLogger).sweep()).toBe(3);
    expect(await permits.holders(queue)).toEqual([running]);
    expect(await permits.acquire(queue, 42, limit, now, now + 3_600_000)).toBe(true); // room again
    await setQueueLimits(db.pool, queue, 0, 0);
  });

  // Why: permits live only in Redis; one restarted empty forgot the deliveries in flight, and the queue went over
  // its limit by as many (a hunt: 6 in flight against 3).
  it("takes again the permits the store lost of this daemon's deliveries in flight", async () => {
    const queue = 'relost';
    await setQueueLimits(db.pool, queue, 3, 0);
    const cache = new QueueLimitsCache(db.pool, silentLogger);
    await cache.refresh();
    const permits = new RedisPermits(redis, prefix);
    const now = Date.now();
    const parts = new DaemonParts({ db: db.pool, shardCount: 1 });
    const made = await parts.scheduling.schedule(Array.from({ length: 2 }, () => scheduleInput(Date.now() + 3_600_000, { queue })));
    await parts.stop();
    const [kept, lost] = made.map((m) => m.run.id);
    await db.pool.query(`UPDATE runs SET status = 'fired' WHERE id = ANY($1::int8[])`, [[kept, lost]]);
    expect(await permits.acquire(queue, kept, cache.get(queue)!, now, now + 3_600_000)).toBe(true);
    // Both in flight here; the store holds only one of them (it lost the other).
    const adopted: number[][] = [];
    const local = { inFlightOf: () => [kept, lost], adopt: (_q: string, ids: ReadonlySet<number>) => void adopted.push([...ids]) };
    await new PermitSweeper(db.pool, cache, permits, silentLogger, local).sweep();
    expect(adopted).toEqual([[lost]]);
    await setQueueLimits(db.pool, queue, 0, 0);
  });

  it.each(stores)("in %s, a second copy of a run is granted the run's permit as shared, and it still counts", async (_name, store) => {
    const queue = `shared-${_name}`;
    const permits = store();
    const limit = { maxInFlight: 2, maxPerSecond: 0 };
    const now = Date.now();
    expect(await permits.acquire(queue, 1, limit, now, now + 60_000)).toBe(true);
    expect(await permits.acquire(queue, 1, limit, now, now + 60_000)).toBe('shared');
    expect(await permits.acquire(queue, 2, limit, now, now + 60_000)).toBe(true);
    expect(await permits.acquire(queue, 3, limit, now, now + 60_000)).toBe('in_flight');
    // A run whose own permit lapsed takes it again as its own, not shared.
    expect(await permits.acquire(queue, 1, limit, now + 120_000, now + 180_000)).toBe(true);
    await permits.releaseAll(queue, [1, 2]);
  });
});

