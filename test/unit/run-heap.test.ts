import { describe, expect, it } from 'vitest';
import { RunHeap, type WindowEntry } from '../../daemon/fast/run-heap.js';
import { seeded as rng } from '../helpers/seeded-random.js';

function entry(runId: number, deadline: number, over: Partial<WindowEntry> = {}): WindowEntry {
  return { runId, shard: 0, dueAtMs: 1_700_000_000_000 + deadline, priority: 0, deadline, ...over };
}

const ids = (es: readonly WindowEntry[]): number[] => es.map((e) => e.runId);


function byFireOrder(a: WindowEntry, b: WindowEntry): number {
  return a.deadline - b.deadline || b.priority - a.priority || a.runId - b.runId;
}

describe('RunHeap', () => {
  it('orders by deadline, then priority (high first), then runId', () => {
    const h = new RunHeap();
    h.push(entry(5, 20));
    h.push(entry(4, 10, { priority: 0 }));
    h.push(entry(3, 10, { priority: 5 }));
    h.push(entry(2, 10, { priority: 0 }));
    h.push(entry(1, 30));
    expect(h.peek()?.runId).toBe(3);
    expect(ids(h.popDue(100))).toEqual([3, 2, 4, 5, 1]);
    expect(h.size).toBe(0);
    expect(h.peek()).toBeUndefined();
  });

  it('popDue returns only what is due, and honours max', () => {
    const h = new RunHeap();
    for (let i = 1; i <= 5; i++) h.push(entry(i, i * 10));
    expect(h.popDue(9)).toEqual([]);
    expect(ids(h.popDue(30, 2))).toEqual([1, 2]);
    expect(ids(h.popDue(30))).toEqual([3]);
    expect(h.size).toBe(2);
    expect(h.has(3)).toBe(false);
  });

  it('remove tombstones: skipped at peek and pop', () => {
    const h = new RunHeap();
    for (let i = 1; i <= 4; i++) h.push(entry(i, i));
    expect(h.remove(1)).toBe(true);
    expect(h.remove(1)).toBe(false);
    expect(h.remove(99)).toBe(false);
    expect(h.peek()?.runId).toBe(2);
    expect(h.remove(3)).toBe(true);
    expect(ids(h.popDue(10))).toEqual([2, 4]);
  });

  it('re-push replaces the live entry; an identical re-push is a no-op', () => {
    const h = new RunHeap();
    h.push(entry(1, 10));
    h.push(entry(2, 20));
    expect(h.push(entry(1, 10))).toBe(false);
    expect(h.tombstones).toBe(0);
    expect(h.push(entry(1, 30))).toBe(true); // rescheduled later
    expect(h.size).toBe(2);
    expect(h.get(1)?.deadline).toBe(30);
    expect(ids(h.popDue(25))).toEqual([2]);
    expect(ids(h.popDue(30))).toEqual([1]);
    h.push(entry(3, 50));
    h.push(entry(3, 5)); // rescheduled earlier
    expect(ids(h.popDue(5))).toEqual([3]);
    expect(h.size).toBe(0);
  });

  it('copies pushed entries, so callers cannot reorder the heap', () => {
    const h = new RunHeap();
    const e = entry(1, 10);
    h.push(e);
    e.deadline = 999;
    expect(h.popDue(10).map((x) => x.deadline)).toEqual([10]);
  });

  it('keeps per-shard counts through push, replace, remove, pop and removeShard', () => {
    const h = new RunHeap();
    for (let i = 0; i < 10; i++) h.push(entry(i, i, { shard: i % 3 }));
    expect([h.sizeOfShard(0), h.sizeOfShard(1), h.sizeOfShard(2), h.sizeOfShard(7)]).toEqual([4, 3, 3, 0]);
    h.push(entry(0, 100, { shard: 2 })); // moved shard on replace
    expect([h.sizeOfShard(0), h.sizeOfShard(2)]).toEqual([3, 4]);
    h.remove(3);
    h.popDue(1); // run 1 (shard 1)
    expect([h.sizeOfShard(0), h.sizeOfShard(1)]).toEqual([2, 2]);
    expect(h.earliestDueOfShard(2)).toBe(entry(2, 2).dueAtMs);
    expect(h.removeShard(2)).toBe(4);
    expect(h.removeShard(2)).toBe(0);
    expect(h.sizeOfShard(2)).toBe(0);
    expect(h.earliestDueOfShard(2)).toBeUndefined();
    expect(h.size).toBe(4);
    expect(ids(h.popDue(1000))).toEqual([4, 6, 7, 9]);
    expect(h.size).toBe(0);
  });

  it('re-heapifies once tombstones pass half, keeping the heap within 2x live', () => {
    const h = new RunHeap();
    for (let i = 0; i < 1000; i++) h.push(entry(i, i));
    for (let i = 0; i < 900; i++) {
      h.remove((i * 7) % 1000); // 7 is coprime with 1000: 900 distinct ids
      expect(h.tombstones).toBeLessThanOrEqual(h.size);
    }
    const left = Array.from({ length: 1000 }, (_, i) => i).filter((i) => h.has(i));
    expect(left).toHaveLength(100);
    expect(ids(h.popDue(Infinity))).toEqual(left);
    expect(h.tombstones).toBe(0);
  });

  it('rebase recomputes every deadline and reorders', () => {
    const h = new RunHeap();
    h.push(entry(1, 10, { dueAtMs: 300 }));
    h.push(entry(2, 20, { dueAtMs: 100 }));
    h.push(entry(3, 30, { dueAtMs: 200 }));
    h.remove(3);
    h.rebase((e) => e.dueAtMs - 50);
    expect(h.get(2)?.deadline).toBe(50);
    expect(ids(h.popDue(100))).toEqual([2]);
    expect(ids(h.popDue(1000))).toEqual([1]);
  });

  it('entries() iterates live entries only', () => {
    const h = new RunHeap();
    for (let i = 0; i < 5; i++) h.push(entry(i, i));
    h.remove(2);
    h.push(entry(3, 99));
    expect([...h.entries()].map((e) => e.runId).sort()).toEqual([0, 1, 3, 4]);
  });

  it('matches a naive sorted array over thousands of random operations', () => {
    for (const seed of [1, 2, 3]) {
      const rand = rng(seed);
      const h = new RunHeap();
      const model = new Map<number, WindowEntry>();
      let now = 0;
      for (let op = 0; op < 6000; op++) {
        const r = rand();
        const runId = Math.floor(rand() * 400);
        if (r < 0.5) {
          const e = entry(runId, now + Math.floor(rand() * 200), {
            shard: Math.floor(rand() * 4),
            priority: Math.floor(rand() * 3),
          });
          h.push(e);
          model.set(runId, { ...e });
        } else if (r < 0.7) {
          expect(h.remove(runId)).toBe(model.delete(runId));
        } else if (r < 0.72) {
          const shard = Math.floor(rand() * 4);
          const gone = [...model.values()].filter((e) => e.shard === shard);
          for (const e of gone) model.delete(e.runId);
          expect(h.removeShard(shard)).toBe(gone.length);
        } else {
          now += Math.floor(rand() * 20);
          const max = rand() < 0.3 ? 1 + Math.floor(rand() * 5) : undefined;
          const expected = [...model.values()]
            .filter((e) => e.deadline <= now)
            .sort(byFireOrder)
            .slice(0, max ?? Infinity);
          for (const e of expected) model.delete(e.runId);
          expect(h.popDue(now, max)).toEqual(expected);
        }
        expect(h.size).toBe(model.size);
        expect(h.tombstones).toBeLessThanOrEqual(h.size);
        let head: WindowEntry | undefined;
        for (const e of model.values()) if (head === undefined || byFireOrder(e, head) < 0) head = e;
        expect(h.peek()).toEqual(head);
        if (op % 500 === 0) {
          for (let s = 0; s < 4; s++) {
            expect(h.sizeOfShard(s)).toBe([...model.values()].filter((e) => e.shard === s).length);
          }
        }
      }
    }
  });

  it('grows past its first capacity and gives memory back after a drain, in order throughout', () => {
    const rand = rng(7);
    const h = new RunHeap();
    const model = new Map<number, WindowEntry>();
    const startSlots = h.slots;
    const check = (now: number, max?: number) => {
      const expected = [...model.values()]
        .filter((e) => e.deadline <= now)
        .sort(byFireOrder)
        .slice(0, max ?? Infinity);
      for (const e of expected) model.delete(e.runId);
      expect(h.popDue(now, max)).toEqual(expected);
      expect(h.size).toBe(model.size);
      expect(h.tombstones).toBeLessThanOrEqual(h.size);
    };
    for (let wave = 0; wave < 3; wave++) {
      const base = wave * 100_000;
      for (let i = 0; i < 20_000; i++) {
        const e = entry(base + i, base + Math.floor(rand() * 50_000), { shard: i % 5, priority: Math.floor(rand() * 3) });
        h.push(e);
        model.set(e.runId, e);
      }
      for (let i = 0; i < 3_000; i++) {
        const id = base + Math.floor(rand() * 20_000);
        expect(h.remove(id)).toBe(model.delete(id));
      }
      for (let i = 0; i < 2_000; i++) {
        const id = base + Math.floor(rand() * 20_000);
        const e = entry(id, base + Math.floor(rand() * 50_000), { shard: 9 });
        h.push(e);
        model.set(id, e);
      }
      expect(h.slots).toBeGreaterThan(startSlots);
      expect(h.peek()).toEqual([...model.values()].sort(byFireOrder)[0]);
      check(base + 10_000, 50);
      check(base + 45_000);
      expect(h.sizeOfShard(9)).toBe([...model.values()].filter((e) => e.shard === 9).length);
      check(Infinity);
      expect(h.size).toBe(0);
      expect(h.slots).toBeLessThanOrEqual(8 * startSlots); // repacked as it drained
    }
  });

  it('cancels 50k entries without a linear walk each', () => {
    const h = new RunHeap();
    const n = 50_000;
    for (let i = 0; i < n; i++) h.push(entry(i, (i * 7919) % n));
    const started = performance.now();
    for (let i = 0; i < n; i++) h.remove((i * 104_729) % n);
    const elapsed = performance.now() - started;
    expect(h.size).toBe(0);
    // A linear remove would take ~35 ms each (half an hour in all); this is ~10 ms.
    expect(elapsed).toBeLessThan(2000);
  });
});
