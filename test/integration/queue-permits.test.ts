/**
 * Queue permits in Postgres (daemons without Redis): two daemons' stores on
 * their own pools, racing for the same queue, never grant more than the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../../daemon/db/pool.js';
import { PostgresPermits } from '../../daemon/dispatch/queue-limits.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

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
    expect(await b.acquire('q', 100, limit, now, now + 60_000)).toBe(true); // a holder asking again keeps its one
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
