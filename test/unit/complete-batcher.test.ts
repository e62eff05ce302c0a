/**
 * The Complete batcher writes one batch at a time while batches are quick (so
 * they grow with the load), and starts a second beside a batch that has been
 * written for 50 ms or more (so one stuck batch never holds back every
 * Complete). An item whose row is locked is written again
 * 5 ms later, then every 100 ms, without holding a batch. daemon/dispatch/complete-batcher.ts.
 *
 * On fake timers, with the batcher's clock the fake Date: its timers and its
 * idea of how long a batch has been written move together, and only when the
 * test moves them. A pause of a loaded machine cannot make a batch look slow.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CompleteBatcher, WRITE_AGAIN } from '../../daemon/dispatch/complete-batcher.js';

interface Pending {
  items: readonly number[];
  /** When the batch was handed to the write (the batcher's clock). */
  at: number;
  settle: () => void;
}

function harness(): { batcher: CompleteBatcher<number>; writes: Pending[] } {
  const writes: Pending[] = [];
  const batcher = new CompleteBatcher<number>(
    (items) =>
      new Promise((resolve) => {
        writes.push({ items, at: Date.now(), settle: () => resolve(items.map(() => null)) });
      }),
    () => Date.now(),
  );
  return { batcher, writes };
}

/** Moves the fake time on 1 ms at a time (running the timers and promises due) until `cond` holds. */
const until = async (cond: () => boolean, ms = 2_000): Promise<void> => {
  for (let waited = 0; !cond(); waited++) {
    if (waited >= ms) throw new Error('condition not met in time');
    await vi.advanceTimersByTimeAsync(1);
  }
};

/** Moves the fake time on until `p` settles. */
async function settling<T>(p: Promise<T>): Promise<T> {
  let done = false;
  void p.finally(() => (done = true)).catch(() => undefined);
  await until(() => done);
  return p;
}

describe('CompleteBatcher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('while a quick batch is written, what arrives waits and goes out as one batch after it', async () => {
    const { batcher, writes } = harness();
    const first = batcher.completeAll([1, 2]);
    await until(() => writes.length === 1);
    const second = [3, 4, 5].map((i) => batcher.complete(i));
    await vi.advanceTimersByTimeAsync(49); // the first batch written for 49 ms: still quick
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
    const next = batcher.complete(2);
    await until(() => writes.length === 2); // the first never settles: a stuck batch
    // Not before the first had been written for 50 ms, and soon after (a re-check at that mark, not a later poll).
    expect(writes[1].at - writes[0].at).toBeGreaterThanOrEqual(50);
    expect(writes[1].at - writes[0].at).toBeLessThan(60);
    expect(writes[1].items).toEqual([2]);
    writes[1].settle();
    await next;
    // Two in flight at most: with the first still stuck and the second slow, a third waits.
    const third = batcher.complete(3);
    await until(() => writes.length === 3);
    void batcher.complete(4);
    await vi.advanceTimersByTimeAsync(120);
    expect(writes).toHaveLength(3);
    expect(batcher.inFlight).toBe(2);
    writes[2].settle();
    await third;
    await until(() => writes.length === 4);
    expect(writes[3].items).toEqual([4]);
  });

  it('an item the write answers WRITE_AGAIN for is written again 5 ms later, then every 100 ms, while the others are answered', async () => {
    const locked = new Set([2]);
    const writes: { items: readonly number[]; at: number }[] = [];
    const batcher = new CompleteBatcher<number>(async (items) => {
      writes.push({ items, at: Date.now() });
      return items.map((i) => (locked.has(i) ? WRITE_AGAIN : null));
    }, () => Date.now());
    let twoDone = false;
    const [one, two, three] = [1, 2, 3].map((i) => batcher.complete(i));
    void two.then(() => (twoDone = true));
    await until(() => writes.length === 1);
    expect(writes[0].items).toEqual([1, 2, 3]);
    await Promise.all([one, three]); // answered while 2 waits
    await until(() => writes.length === 2);
    // Again 5 ms later (a lock held for a moment), not at once,
    expect(writes[1].items).toEqual([2]);
    expect(writes[1].at - writes[0].at).toBe(5);
    await until(() => writes.length === 3);
    expect(writes[2].at - writes[1].at).toBe(100); // then every 100 ms
    expect(batcher.waitingToWriteAgain).toBe(1); // waiting in a timer, not in a batch being written
    const four = batcher.complete(4); // a later Complete is not held back by it
    await until(() => writes.some((w) => w.items.includes(4)));
    await four;
    expect(twoDone).toBe(false);
    locked.clear();
    await until(() => twoDone);
    expect(writes.at(-1)!.items).toEqual([2]);
    expect(batcher.waitingToWriteAgain).toBe(0);
  });

  it('items of one batch written again stay together; past the policy\'s limit, or once closed, they get its error', async () => {
    const writes: { items: readonly number[]; at: number }[] = [];
    const warnings: number[] = [];
    const batcher = new CompleteBatcher<number>(
      async (items) => {
        writes.push({ items, at: Date.now() });
        return items.map(() => WRITE_AGAIN);
      },
      () => Date.now(),
      { giveUpAfterMs: 1_500, giveUp: (i, waited) => new Error(`gave up on ${i} after ${waited} ms`), warn: (n) => warnings.push(n) },
    );
    const t0 = Date.now();
    const outcomes = batcher.completeAll([7, 7, 8]); // 7 twice: one delivery's Complete and its resend
    await until(() => writes.length === 3);
    // Written again together, whatever else: two copies of one delivery share one statement's outcome.
    expect(writes.map((w) => w.items)).toEqual([[7, 7, 8], [7, 7, 8], [7, 7, 8]]);
    expect(warnings).toEqual([]); // not for a lock of a few ms
    await until(() => warnings.length > 0);
    expect(Date.now() - t0).toBe(5 + 1_005); // once they have waited a second; not on every try
    expect(warnings).toEqual([3]);
    expect(await settling(outcomes)).toEqual([7, 7, 8].map((i) => new Error(`gave up on ${i} after ${1_500 + 5} ms`)));
    expect(Date.now() - t0).toBeLessThan(1_700);
    expect(warnings).toEqual([3]);

    const waiting = batcher.completeAll([9]);
    await until(() => batcher.waitingToWriteAgain === 1);
    batcher.close(); // the daemon stopping: answered now, not after the lock
    expect((await waiting)[0]?.message).toMatch(/gave up on 9/);
    expect((await settling(batcher.completeAll([10])))[0]?.message).toBe('gave up on 10 after 0 ms');
  });

  it('a Complete that finds the batcher idle waits 5 ms for others: five arriving a millisecond apart make one batch', async () => {
    const { batcher, writes } = harness();
    const t0 = Date.now();
    const done: Promise<void>[] = [];
    for (let k = 0; k < 5; k++) {
      done.push(batcher.complete(k));
      await vi.advanceTimersByTimeAsync(1);
    }
    await until(() => writes.length === 1);
    // One statement for all five (gathering 1 ms wrote the first alone), written 5 ms after the first arrived.
    expect(writes[0].items).toEqual([0, 1, 2, 3, 4]);
    expect(writes[0].at - t0).toBe(5);
    writes[0].settle();
    await Promise.all(done);
  });

  it('under a steady stream a batch waits until its oldest item has waited 5 ms, not only for the batch before it', async () => {
    // Batches written in 2 ms, one Complete a millisecond (1,000 runs/s): back to back they would be pairs, 20 statements in 40 ms.
    const writes: { items: readonly number[]; at: number }[] = [];
    const batcher = new CompleteBatcher<number>(
      (items) => {
        writes.push({ items, at: Date.now() });
        return new Promise((resolve) => setTimeout(() => resolve(items.map(() => null)), 2));
      },
      () => Date.now(),
    );
    const done: Promise<void>[] = [];
    for (let k = 0; k < 40; k++) {
      done.push(batcher.complete(Date.now())); // the item is its arrival time
      await vi.advanceTimersByTimeAsync(1);
    }
    await settling(Promise.all(done));
    expect(writes.flatMap((w) => w.items)).toHaveLength(40);
    for (const w of writes) expect(w.at - Math.min(...w.items)).toBeGreaterThanOrEqual(5);
    expect(writes.length).toBeLessThanOrEqual(8);
  });

  it('whatever the write times and arrival gaps, no batch starts before its oldest item has waited 5 ms, and every item is written once', async () => {
    // A fixed pseudo-random pattern: writes of 1-14 ms and now and then 60 ms (a slow batch: a second starts beside it),
    // arrivals in bursts with gaps, so gather timers are armed while batches are written and left behind by them.
    let seed = 7;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const writes: { items: readonly number[]; at: number }[] = [];
    const batcher = new CompleteBatcher<number>(
      (items) => {
        writes.push({ items, at: Date.now() });
        const ms = rand(10) === 0 ? 60 : 1 + rand(14);
        return new Promise((resolve) => setTimeout(() => resolve(items.map(() => null)), ms));
      },
      () => Date.now(),
    );
    const done: Promise<void>[] = [];
    for (let k = 0; k < 400; k++) {
      for (let n = rand(3); n > 0; n--) done.push(batcher.complete(Date.now()));
      await vi.advanceTimersByTimeAsync(rand(8) === 0 ? 20 + rand(40) : rand(3));
    }
    await settling(Promise.all(done));
    expect(writes.flatMap((w) => w.items)).toHaveLength(done.length);
    const early = writes.filter((w) => w.at - Math.min(...w.items) < 5);
    expect(early, JSON.stringify(early.slice(0, 3))).toEqual([]);
  });

  it('a queue holding a full batch (2,000) is written at once, without the 5 ms wait', async () => {
    const { batcher, writes } = harness();
    const t0 = Date.now();
    const all = batcher.completeAll(Array.from({ length: 2000 }, (_, i) => i));
    await until(() => writes.length === 1);
    expect(writes[0].items).toHaveLength(2000);
    expect(writes[0].at).toBe(t0);
    writes[0].settle();
    await settling(all);
  });

  it('an item whose outcome the write hands on as a promise settles with it, and the batch is done at once: the next batches are not held', async () => {
    let later: (err: Error | null) => void = () => undefined;
    const handedOn = new Promise<Error | null>((resolve) => (later = resolve));
    const writes: (readonly number[])[] = [];
    const batcher = new CompleteBatcher<number>(async (items) => {
      writes.push(items);
      return items.map((i) => (i === 2 ? handedOn : i === 3 ? handedOn : null));
    }, () => Date.now());
    let twoThree: (Error | null)[] | undefined;
    void batcher.completeAll([2, 3]).then((out) => (twoThree = out));
    await settling(batcher.completeAll([1]));
    // Two batches more, one after the other: neither waits for the handed-on items (at most two batches are written at once).
    await settling(batcher.complete(4));
    await settling(batcher.complete(5));
    expect(writes).toEqual([[2, 3, 1], [4], [5]]);
    expect(twoThree).toBeUndefined();
    later(new Error('locked'));
    await until(() => twoThree !== undefined);
    expect(twoThree!.map((e) => e?.message ?? null)).toEqual(['locked', 'locked']);
  });
});
