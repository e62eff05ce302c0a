/**
 * The Complete batcher writes one batch at a time while batches are quick (so
 * they grow with the load), and starts a second beside a batch that has been
 * written for 50 ms or more (so one stuck batch never holds back every
 * Complete). daemon/dispatch/complete-batcher.ts.
 */
import { describe, expect, it } from 'vitest';
import { CompleteBatcher } from '../../daemon/dispatch/complete-batcher.js';

interface Pending {
  items: readonly number[];
  settle: () => void;
}

function harness(): { batcher: CompleteBatcher<number>; writes: Pending[] } {
  const writes: Pending[] = [];
  const batcher = new CompleteBatcher<number>(
    (items) =>
      new Promise((resolve) => {
        writes.push({ items, settle: () => resolve(items.map(() => null)) });
      }),
  );
  return { batcher, writes };
}

const until = async (cond: () => boolean, ms = 2_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
};

describe('CompleteBatcher', () => {
  it('while a quick batch is written, what arrives waits and goes out as one batch after it', async () => {
    const { batcher, writes } = harness();
    const first = batcher.completeAll([1, 2]);
    await until(() => writes.length === 1);
    const second = [3, 4, 5].map((i) => batcher.complete(i));
    await new Promise((r) => setTimeout(r, 10)); // well under 50 ms
    expect(writes).toHaveLength(1);
    writes[0].settle();
    expect(await first).toEqual([null, null]);
    await until(() => writes.length === 2);
    expect(writes[1].items).toEqual([3, 4, 5]);
    writes[1].settle();
    await Promise.all(second);
  });

  it('a batch written for 50 ms or more lets the next start beside it, and no third', async () => {
    const { batcher, writes } = harness();
    void batcher.complete(1);
    await until(() => writes.length === 1);
    const started = Date.now();
    const next = batcher.complete(2);
    await until(() => writes.length === 2); // the first never settles: a stuck batch
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(writes[1].items).toEqual([2]);
    writes[1].settle();
    await next;
    // Two in flight at most: with the first still stuck and the second slow, a third waits.
    const third = batcher.complete(3);
    await until(() => writes.length === 3);
    void batcher.complete(4);
    await new Promise((r) => setTimeout(r, 120));
    expect(writes).toHaveLength(3);
    expect(batcher.inFlight).toBe(2);
    writes[2].settle();
    await third;
    await until(() => writes.length === 4);
    expect(writes[3].items).toEqual([4]);
  });
});
