import { afterEach, describe, expect, it } from 'vitest';
import { FireTimer, MAX_TIMER_MS } from '../../daemon/fast/fire-timer.js';
import { RunHeap, type WindowEntry } from '../../daemon/fast/run-heap.js';
import { FakeClock, type FakeClockOptions } from '../helpers/fake-clock.js';

interface Fire {
  runId: number;
  deadline: number;
  firedAt: number;
  batch: number;
}

describe('FireTimer', () => {
  let timer: FireTimer | undefined;
  afterEach(() => timer?.stop());

  function setup(clockOpts: FakeClockOptions = {}, opts: { earlyMs?: number; maxBatch?: number; spin?: boolean } = {}) {
    const clock = new FakeClock(clockOpts);
    const heap = new RunHeap();
    const fires: Fire[] = [];
    let batches = 0;
    timer = new FireTimer(
      clock,
      heap,
      (due, firedAt) => {
        batches++;
        for (const e of due) fires.push({ runId: e.runId, deadline: e.deadline, firedAt, batch: batches });
        // The contract: firedAt is a real monotonic reading, never before a deadline.
        expect(firedAt).toBe(clock.monoNow());
      },
      opts,
    );
    const t = timer;
    const push = (runId: number, inMs: number, priority = 0): WindowEntry => {
      const e = { runId, shard: 0, dueAtMs: 0, priority, deadline: clock.monoNow() + inMs };
      heap.push(e);
      t.poke();
      return e;
    };
    return { clock, heap, fires, timer: t, push };
  }

  it('never fires early, even when the platform timer fires early', () => {
    // Node's setTimeout: up to ~1 ms early, fractional delays truncated.
    const { clock, fires, push } = setup({ timerEarlyMs: 1 }, { earlyMs: 2 });
    for (let i = 0; i < 200; i++) push(i, 3.3 + i * 7.77);
    clock.advance(2_000);
    expect(fires).toHaveLength(200);
    for (const f of fires) {
      expect(f.firedAt).toBeGreaterThanOrEqual(f.deadline);
      expect(f.firedAt - f.deadline).toBeLessThan(0.5);
    }
  });

  it('never fires early with no early wake either (earlyMs 0)', () => {
    const { clock, fires, push } = setup({ timerEarlyMs: 1 }, { earlyMs: 0 });
    for (let i = 0; i < 50; i++) push(i, 0.5 + i * 3.1);
    clock.advance(1_000);
    expect(fires).toHaveLength(50);
    for (const f of fires) expect(f.firedAt).toBeGreaterThanOrEqual(f.deadline);
  });

  it('spin: false never polls (no setImmediate), never fires early, and is at most a timer tick late', () => {
    const { clock, fires, push } = setup({ timerEarlyMs: 1 }, { spin: false });
    let polls = 0;
    const setImmediate = clock.setImmediate.bind(clock);
    clock.setImmediate = (fn) => {
      polls++;
      return setImmediate(fn);
    };
    // Deadlines closer together than a millisecond: a spinning gate would poll between all of them.
    for (let i = 0; i < 300; i++) push(i, 1.3 + i * 0.37);
    clock.advance(1_000);
    expect(fires).toHaveLength(300);
    expect(polls).toBe(0);
    for (const f of fires) {
      expect(f.firedAt).toBeGreaterThanOrEqual(f.deadline);
      expect(f.firedAt - f.deadline).toBeLessThan(2);
    }
  });

  it('hands everything due at once to one call, in fire order', () => {
    const { clock, fires, push } = setup();
    push(1, 100);
    push(2, 100, 5);
    push(3, 100);
    push(4, 101);
    clock.advance(100);
    expect(fires.map((f) => [f.runId, f.batch])).toEqual([
      [2, 1],
      [1, 1],
      [3, 1],
    ]);
    clock.advance(5);
    expect(fires.map((f) => f.runId)).toEqual([2, 1, 3, 4]);
  });

  it('splits a huge due set into maxBatch calls, the rest on the next turn', () => {
    const { clock, fires, push } = setup({}, { maxBatch: 3 });
    for (let i = 0; i < 7; i++) push(i, 10);
    clock.advance(10);
    expect(fires.map((f) => f.batch)).toEqual([1, 1, 1]);
    clock.runImmediates();
    clock.runImmediates();
    expect(fires.map((f) => f.batch)).toEqual([1, 1, 1, 2, 2, 2, 3]);
    expect(fires.every((f) => f.firedAt === fires[0].firedAt)).toBe(true);
  });

  it('uses one timer for many runs', () => {
    const { clock, timer, push } = setup();
    for (let i = 0; i < 1_000; i++) push(i, 10_000 - i);
    // Each earlier push moves the gate (one timer replaced by another) ...
    expect(clock.pendingTimers).toBe(1);
    expect(timer.armedDeadline).toBe(clock.monoNow() + 9_001);
    // ... but later pushes do not touch it.
    const set = clock.timersSet;
    for (let i = 1_000; i < 2_000; i++) push(i, 20_000 + i);
    expect(clock.timersSet).toBe(set);
  });

  it('re-arms earlier when an earlier entry is pushed', () => {
    const { clock, fires, timer, push } = setup();
    push(1, 1_000);
    clock.advance(100);
    push(2, 50);
    expect(timer.armedDeadline).toBe(clock.monoNow() + 50);
    clock.advance(50);
    expect(fires.map((f) => f.runId)).toEqual([2]);
    clock.advance(849);
    expect(fires.map((f) => f.runId)).toEqual([2]);
    clock.advance(1);
    expect(fires.map((f) => f.runId)).toEqual([2, 1]);
  });

  it('fires an entry pushed while spinning if it is earlier', () => {
    const { clock, fires, push } = setup({}, { earlyMs: 2 });
    push(1, 10);
    clock.advance(8.5); // woke at 8, spinning now
    push(2, 0.25);
    clock.advance(2);
    expect(fires.map((f) => f.runId)).toEqual([2, 1]);
    for (const f of fires) expect(f.firedAt).toBeGreaterThanOrEqual(f.deadline);
  });

  it('wakes for a tombstoned head, fires nothing, and re-arms for the new head', () => {
    const { clock, heap, fires, timer, push } = setup();
    push(1, 100);
    const later = push(2, 300);
    heap.remove(1);
    clock.advance(150);
    expect(fires).toEqual([]);
    expect(timer.armedDeadline).toBe(later.deadline);
    clock.advance(150);
    expect(fires.map((f) => f.runId)).toEqual([2]);
  });

  it('goes idle when everything was cancelled', () => {
    const { clock, heap, fires, timer, push } = setup();
    push(1, 100);
    heap.remove(1);
    clock.advance(200);
    expect(fires).toEqual([]);
    expect(timer.armedDeadline).toBeUndefined();
    expect(clock.pendingTimers + clock.pendingImmediates).toBe(0);
  });

  it('clamps delays beyond 2^31-1 ms and still fires on time', () => {
    const { clock, fires, timer, push } = setup();
    const day = 86_400_000;
    const e = push(1, 60 * day); // FakeClock throws on an unclamped delay
    expect(clock.pendingTimers).toBe(1);
    clock.advance(MAX_TIMER_MS + 10);
    expect(fires).toEqual([]);
    expect(timer.armedDeadline).toBe(e.deadline);
    clock.advanceTo(e.deadline - 1);
    expect(fires).toEqual([]);
    clock.advanceTo(e.deadline + 1);
    expect(fires).toHaveLength(1);
    expect(fires[0].firedAt).toBeGreaterThanOrEqual(e.deadline);
  });

  it('fires overdue entries on the next turn, not synchronously in poke', () => {
    const { clock, fires, push } = setup();
    push(1, -500);
    expect(fires).toEqual([]);
    clock.runImmediates();
    expect(fires.map((f) => f.runId)).toEqual([1]);
  });

  it('picks up entries pushed from inside onDue', () => {
    const clock = new FakeClock();
    const heap = new RunHeap();
    const fired: number[] = [];
    timer = new FireTimer(clock, heap, (due) => {
      for (const e of due) {
        fired.push(e.runId);
        if (e.runId < 3) heap.push({ ...e, runId: e.runId + 1, deadline: clock.monoNow() + 10 });
      }
    });
    heap.push({ runId: 1, shard: 0, dueAtMs: 0, priority: 0, deadline: clock.monoNow() + 10 });
    timer.poke();
    clock.advance(100);
    expect(fired).toEqual([1, 2, 3]);
  });

  it('reset() follows a head that moved later', () => {
    const { clock, heap, fires, timer } = setup();
    heap.push({ runId: 1, shard: 0, dueAtMs: 0, priority: 0, deadline: clock.monoNow() + 10 });
    timer.poke();
    heap.rebase((e) => e.deadline + 1_000);
    timer.reset();
    expect(timer.armedDeadline).toBe(clock.monoNow() + 1_010);
    clock.advance(1_009);
    expect(fires).toEqual([]);
    clock.advance(1);
    expect(fires).toHaveLength(1);
  });

  it('stop() clears everything and ignores later pokes', () => {
    const { clock, fires, timer, push } = setup();
    push(1, 10);
    timer.stop();
    push(2, 5);
    expect(clock.pendingTimers + clock.pendingImmediates).toBe(0);
    clock.advance(100);
    expect(fires).toEqual([]);
  });
});
