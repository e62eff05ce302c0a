import { afterEach, describe, expect, it } from 'vitest';
import { BASELINE_LATE_MS, ClockWatch } from '../../daemon/fast/clock-watch.js';
import type { Clock } from '../../daemon/fast/clock.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('ClockWatch', () => {
  let watch: ClockWatch | undefined;
  afterEach(() => watch?.stop());

  function setup(opts: { intervalMs?: number; stepThresholdMs?: number } = {}) {
    const clock = new FakeClock({ wallStartMs: 1_700_000_000_000, monoStartMs: 5_000 });
    const steps: number[] = [];
    watch = new ClockWatch(clock, { ...opts, onStep: (d) => steps.push(d) });
    return { clock, steps, watch };
  }

  it('converts due times to monotonic deadlines with the offset', () => {
    const { clock, watch } = setup();
    expect(watch.offsetMs).toBe(1_700_000_000_000 - 5_000);
    expect(watch.toDeadline(clock.wallNow() + 250)).toBe(clock.monoNow() + 250);
  });

  it('detects a step forward on the next periodic check', () => {
    const { clock, steps, watch } = setup({ intervalMs: 500 });
    watch.start();
    clock.advance(100);
    clock.stepWall(10_000);
    clock.advance(399);
    expect(steps).toEqual([]);
    clock.advance(1);
    expect(steps).toEqual([10_000]);
    expect(watch.toDeadline(clock.wallNow() + 50)).toBe(clock.monoNow() + 50);
    expect([watch.steps, watch.lastStepMs, watch.stats.lastStepAtWallMs]).toEqual([1, 10_000, clock.wallNow()]);
  });

  it('detects a step back', () => {
    const { clock, steps, watch } = setup({ intervalMs: 500 });
    watch.start();
    clock.stepWall(-3_000);
    clock.advance(500);
    expect(steps).toEqual([-3_000]);
    expect(watch.toDeadline(clock.wallNow())).toBe(clock.monoNow());
    // One step is reported once, not on every later check.
    clock.advance(5_000);
    expect(steps).toEqual([-3_000]);
  });

  it('ignores jitter below the threshold', () => {
    const { clock, steps, watch } = setup({ intervalMs: 500, stepThresholdMs: 25 });
    const before = watch.offsetMs;
    watch.start();
    for (const jitter of [1, -1, 20, -20, 5, -25, 25]) {
      clock.stepWall(jitter);
      clock.advance(500);
    }
    expect(steps).toEqual([]);
    expect(watch.offsetMs).toBe(before);
  });

  it('treats small moves that add up past the threshold as one step', () => {
    const { clock, steps, watch } = setup({ intervalMs: 500, stepThresholdMs: 25 });
    watch.start();
    for (let i = 0; i < 3; i++) {
      clock.stepWall(10);
      clock.advance(500);
    }
    expect(steps).toEqual([30]);
  });

  it('check() can be called directly and start() checks at once', () => {
    const { clock, steps, watch } = setup();
    clock.stepWall(-100);
    expect(watch.check()).toBe(-100);
    expect(watch.check()).toBe(0);
    clock.stepWall(100);
    watch.start();
    expect(steps).toEqual([-100, 100]);
  });

  it('stop() stops the periodic check and leaves no timer behind', () => {
    const { clock, steps, watch } = setup();
    watch.start();
    expect(clock.pendingTimers).toBe(1);
    watch.stop();
    expect(clock.pendingTimers).toBe(0);
    clock.stepWall(1_000);
    clock.advance(2_000);
    expect(steps).toEqual([]);
  });

  /**
   * A real-looking clock: every read moves time on by 3 µs and the wall clock
   * truncates to whole ms. The first `preemptedTicks` ticks of the wall clock
   * come during a 0.8 ms preemption (the read that crosses each is that late).
   */
  function readingClock(trueOffset: number, preemptedTicks: number): Clock {
    let mono = 5_000.8;
    let preempted = 0;
    const read = (): number => {
      let next = mono + 0.003;
      if (preempted < preemptedTicks && Math.floor(next + trueOffset) !== Math.floor(mono + trueOffset)) {
        preempted++;
        next += 0.8;
      }
      return (mono = next);
    };
    return {
      monoNow: read,
      wallNow: () => Math.floor(read() + trueOffset),
      setTimer: () => 0 as never,
      clearTimer: () => undefined,
      setImmediate: () => 0 as never,
      clearImmediate: () => undefined,
    };
  }
  const TRUE_OFFSET = 1_700_000_000_000.37;

  it('takes its baseline at an edge of the wall clock: within µs of the true offset, just late', () => {
    const w = new ClockWatch(readingClock(TRUE_OFFSET, 0));
    // A plain sample would be up to 1 ms low (deadlines up to 1 ms late); this one is BASELINE_LATE_MS low, ± a few µs.
    expect(TRUE_OFFSET - w.offsetMs).toBeGreaterThan(BASELINE_LATE_MS - 0.01);
    expect(TRUE_OFFSET - w.offsetMs).toBeLessThan(BASELINE_LATE_MS + 0.01);
  });

  it('skips an edge whose bracket a preemption widened, and takes the next', () => {
    const w = new ClockWatch(readingClock(TRUE_OFFSET, 2));
    expect(TRUE_OFFSET - w.offsetMs).toBeGreaterThan(BASELINE_LATE_MS - 0.01);
    expect(TRUE_OFFSET - w.offsetMs).toBeLessThan(BASELINE_LATE_MS + 0.01);
  });

  it('with no tight bracket at all, falls back to the plain sample: late, never early', () => {
    const w = new ClockWatch(readingClock(TRUE_OFFSET, 1_000));
    expect(w.offsetMs).toBeLessThanOrEqual(TRUE_OFFSET); // a lower offset puts deadlines later
    expect(TRUE_OFFSET - w.offsetMs).toBeLessThan(1);
  });

  it('rejects bad options with the field name', () => {
    const clock = new FakeClock();
    expect(() => new ClockWatch(clock, { intervalMs: 0 })).toThrow(/intervalMs/);
    expect(() => new ClockWatch(clock, { stepThresholdMs: -1 })).toThrow(/stepThresholdMs/);
    expect(() => new ClockWatch(clock, { stepThresholdMs: 0.5 })).toThrow(/stepThresholdMs must be >= 1/);
  });
});
