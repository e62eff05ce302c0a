import { describe, expect, it } from 'vitest';
import { LocalPermits } from '../../daemon/dispatch/queue-limits.js';
import { ReadyQueue } from '../../daemon/dispatch/ready-queue.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';

describe('LocalPermits (a daemon without Redis)', () => {
  it('holds at most max_in_flight permits until released, and a holder asking again keeps its one', async () => {
    const p = new LocalPermits();
    const limit = { maxInFlight: 2, maxPerSecond: 0 };
    expect(await p.acquire('q', 1, limit, 1_000, 99_000)).toBe(true);
    expect(await p.acquire('q', 2, limit, 1_000, 99_000)).toBe(true);
    expect(await p.acquire('q', 3, limit, 1_000, 99_000)).toBe('in_flight');
    expect(await p.acquire('q', 2, limit, 1_000, 99_000)).toBe('shared'); // granted, but not this caller's to give back
    expect(await p.acquire('other', 3, limit, 1_000, 99_000)).toBe(true); // per queue
    await p.release('q', 1);
    expect(await p.acquire('q', 3, limit, 1_000, 99_000)).toBe(true);
  });

  it('a permit lapses at its end (a delivery nobody settled)', async () => {
    const p = new LocalPermits();
    const limit = { maxInFlight: 1, maxPerSecond: 0 };
    expect(await p.acquire('q', 1, limit, 1_000, 2_000)).toBe(true);
    expect(await p.acquire('q', 2, limit, 1_500, 9_000)).toBe('in_flight');
    expect(await p.acquire('q', 2, limit, 2_000, 9_000)).toBe(true);
  });

  it('grants at most max_per_second per wall-clock second', async () => {
    const p = new LocalPermits();
    const limit = { maxInFlight: 0, maxPerSecond: 3 };
    const at = (ms: number, id: number) => p.acquire('q', id, limit, ms, ms + 1_000);
    expect([await at(5_000, 1), await at(5_100, 2), await at(5_999, 3), await at(5_999, 4)]).toEqual([true, true, true, 'rate']);
    expect(await at(6_000, 4)).toBe(true);
  });
});

describe('ReadyQueue', () => {
  const run = (id: number, priority: number, due: number) => ({ id, priority, due_at_ms: due }) as FiredRunRow;
  it('hands out by priority, then due time, then id; skips runs deleted or replaced', () => {
    const q = new ReadyQueue();
    q.set(run(1, 0, 100));
    q.set(run(2, 5, 300));
    q.set(run(3, 0, 50));
    q.set(run(4, 5, 200));
    q.delete(4);
    const replaced = run(3, 9, 50);
    q.set(replaced);
    expect(q.peek()).toBe(replaced);
    expect([q.shift()?.id, q.shift()?.id, q.shift()?.id, q.shift()]).toEqual([3, 2, 1, undefined]);
    expect(q.size).toBe(0);
  });
});
