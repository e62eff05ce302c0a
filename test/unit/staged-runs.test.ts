import { describe, expect, it } from 'vitest';
import { StagedRuns, TransitFloor, type HoldClock } from '../../clients/typescript/src/staged-runs.js';
import type { DeliveredRunInfo } from '../../clients/typescript/src/types.js';

/**
 * A hold clock whose timers fire `earlyMs` before their delay is up, as
 * Node's may (they count from the event loop's cached time).
 */
class EarlyTimers implements HoldClock {
  t = 1_000;
  timers = new Map<number, { at: number; fn: () => void }>();
  private seq = 0;
  set = 0;
  constructor(private readonly earlyMs: number) {}
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.set++;
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms - this.earlyMs, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  /** Runs timers in order until `to`. */
  advance(to: number): void {
    for (;;) {
      const next = [...this.timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > to) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = to;
  }
}

function run(id: number, startInMs: number, mode: 'at_least_once' | 'at_most_once' = 'at_least_once'): DeliveredRunInfo {
  return { runId: String(id), startInMs, mode } as DeliveredRunInfo;
}

describe('StagedRuns', () => {
  it('starts each run once its hold is over, never before, in start order, with one timer', () => {
    const clock = new EarlyTimers(0.9);
    const started: { id: string; at: number }[] = [];
    const staged = new StagedRuns<string>((r) => started.push({ id: r.runId, at: clock.now() }), clock);
    // Out of order on purpose; holds with fractions.
    staged.add(run(3, 7.25), 's');
    staged.add(run(1, 2.5), 's');
    staged.add(run(2, 2.5), 's');
    staged.add(run(4, 30), 's');
    clock.advance(1_100);
    expect(started.map((s) => s.id)).toEqual(['1', '2', '3', '4']);
    const holds: Record<string, number> = { '1': 2.5, '2': 2.5, '3': 7.25, '4': 30 };
    for (const s of started) {
      expect(s.at).toBeGreaterThanOrEqual(1_000 + holds[s.id]);
      // Late by under a timer tick and the early wake it slept again after.
      expect(s.at).toBeLessThan(1_000 + holds[s.id] + 2);
    }
    expect(staged.size).toBe(0);
    // One timer armed at a time (re-armed per wake), not one per run.
    expect(clock.timers.size).toBe(0);
  });

  it('a run taken back (cancelled) never starts; the others still do', () => {
    const clock = new EarlyTimers(0);
    const started: string[] = [];
    const staged = new StagedRuns<string>((r) => started.push(r.runId), clock);
    staged.add(run(1, 5), 's');
    staged.add(run(2, 6), 's');
    expect(staged.take('1')?.runId).toBe('1');
    expect(staged.take('1')).toBeUndefined();
    clock.advance(1_100);
    expect(started).toEqual(['2']);
  });

  it('holds one copy of a run: a newer delivery replaces the held one, which never starts', () => {
    const clock = new EarlyTimers(0);
    const started: { id: string; delivery: number }[] = [];
    const staged = new StagedRuns<string>((r) => started.push({ id: r.runId, delivery: r.delivery }), clock);
    staged.add({ ...run(1, 5), delivery: 1 } as DeliveredRunInfo, 's');
    staged.add({ ...run(1, 8), delivery: 2 } as DeliveredRunInfo, 's');
    expect(staged.size).toBe(1);
    clock.advance(1_100);
    expect(started).toEqual([{ id: '1', delivery: 2 }]);
    expect(staged.size).toBe(0);
  });

  it('drops the at-least-once runs of an ended stream and keeps its at-most-once ones and other streams’', () => {
    const clock = new EarlyTimers(0);
    const started: string[] = [];
    const staged = new StagedRuns<string>((r) => started.push(r.runId), clock);
    staged.add(run(1, 5), 'a');
    staged.add(run(2, 5, 'at_most_once'), 'a');
    staged.add(run(3, 5), 'b');
    const dropped = staged.dropFrom('a', (r) => r.mode === 'at_most_once');
    expect(dropped.map((r) => r.runId)).toEqual(['1']);
    clock.advance(1_100);
    expect(started).toEqual(['2', '3']);
  });

  it('clear() forgets everything and ignores later adds', () => {
    const clock = new EarlyTimers(0);
    const started: string[] = [];
    const staged = new StagedRuns<string>((r) => started.push(r.runId), clock);
    staged.add(run(1, 5), 's');
    expect(staged.clear().map((r) => r.runId)).toEqual(['1']);
    staged.add(run(2, 5), 's');
    clock.advance(1_100);
    expect(started).toEqual([]);
    expect(clock.timers.size).toBe(0);
  });

  it('keeps start order over many runs added as batches arrive', () => {
    const clock = new EarlyTimers(0.5);
    const started: { id: number; at: number }[] = [];
    const staged = new StagedRuns<string>((r) => started.push({ id: Number(r.runId), at: clock.now() }), clock);
    // Run i due at 1_000 + 20 + i/5 ms; batches of 50 arrive every 10 ms, 20 ms ahead.
    for (let batch = 0; batch < 40; batch++) {
      const now = 1_000 + batch * 10;
      clock.advance(now);
      for (let k = 0; k < 50; k++) {
        const i = batch * 50 + k;
        staged.add(run(i, 1_000 + 20 + i / 5 - now), 's');
      }
    }
    clock.advance(2_000);
    expect(started.length).toBe(2_000);
    started.forEach((s, i) => {
      expect(s.id).toBe(i);
      expect(s.at).toBeGreaterThanOrEqual(1_000 + 20 + i / 5);
    });
  });
});

describe('TransitFloor', () => {
  it('takes out only what a batch took beyond the fastest lately (less a margin), and forgets old windows', () => {
    const f = new TransitFloor();
    // The clocks' offset is 5,000 ms; transits 0.2, 3.2 and 0.7 ms.
    expect(f.excess(5_000.2, 0)).toBe(0);
    expect(f.excess(5_003.2, 10)).toBeCloseTo(3 - 0.05, 6);
    expect(f.excess(5_000.7, 20)).toBeCloseTo(0.5 - 0.05, 6);
    // A slower batch never makes the excess negative.
    expect(f.excess(5_000.1, 30)).toBe(0);
    // The window before still counts...
    expect(f.excess(5_001.1, 1_500)).toBeCloseTo(1 - 0.05, 6);
    // ...but not one two windows back: the clocks may have drifted since.
    expect(f.excess(5_002, 4_000)).toBe(0);
  });
});
