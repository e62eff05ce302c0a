import { describe, expect, it } from 'vitest';
import { newId, newIds } from '../../daemon/ids.js';
import { shardOf } from '../../daemon/shard-of.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('newId / newIds (UUIDv7)', () => {
  it('carries the given millisecond in its first 48 bits, version 7, RFC 9562 variant', () => {
    for (const ms of [0, 1, 1_795_527_074_229, 2 ** 48 - 1]) {
      const id = newId(ms);
      expect(id).toMatch(V7);
      expect(msOf(id)).toBe(ms);
    }
  });

  it('never repeats, across many refills of the random pool', () => {
    const ids = [...newIds(50_000), ...newIds(50_000)];
    expect(new Set(ids).size).toBe(100_000);
    for (const id of ids.slice(0, 1_000)) expect(id).toMatch(V7);
    // The random part differs between ids of one millisecond: not the pool's bytes read twice.
    const tails = new Set(newIds(1_000).map((id) => id.slice(14)));
    expect(tails.size).toBe(1_000);
  });

  it('sorts by the millisecond it was made in', () => {
    const earlier = Array.from({ length: 500 }, () => newId(1_000));
    const later = Array.from({ length: 500 }, () => newId(1_001));
    const maxEarlier = earlier.sort().at(-1) as string;
    expect(later.every((id) => id > maxEarlier)).toBe(true);
  });

  it('spreads over shards as evenly as random ids do (shardOf hashes the whole id)', () => {
    const shards = 64;
    const n = 64_000;
    const counts = new Array<number>(shards).fill(0);
    // All of one millisecond, the worst case for a hash of a time-prefixed string.
    for (const id of newIds(n)) counts[shardOf(id, shards)]++;
    const mean = n / shards;
    for (const c of counts) {
      // ±25 % is 7.9 standard deviations of a uniform hash: never by chance; a hash that sees only the time would fail it.
      expect(c).toBeGreaterThan(mean * 0.75);
      expect(c).toBeLessThan(mean * 1.25);
    }
  });
});
