/**
 * The client library's wall clock (clients/typescript/src/clock.ts) pairs
 * Date.now() with performance.now() at a tick of Date.now(). A pairing taken
 * while the process was preempted between the two reads used to stay up to
 * 1 ms off for good (every receipt read low: "early" runs). Time is scripted
 * here: each performance.now() read moves on 2 µs, and the read that crosses
 * the first tick is "preempted" (0.8 ms late).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const TRUE_OFFSET = 1_700_000_000_000.4; // wall = mono + TRUE_OFFSET

describe('client wallNowMs', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.resetModules();
  });

  it('is within µs of the true wall time even when the first tick was bracketed by a preemption', async () => {
    let mono = 100.0;
    let preempted = false;
    vi.spyOn(performance, 'now').mockImplementation(() => {
      let next = mono + 0.002;
      // The read that crosses the first tick of the wall clock comes 0.8 ms late (the process was preempted).
      if (!preempted && Math.floor(next + TRUE_OFFSET) !== Math.floor(mono + TRUE_OFFSET)) {
        preempted = true;
        next += 0.8;
      }
      return (mono = next);
    });
    vi.spyOn(Date, 'now').mockImplementation(() => Math.floor(mono + TRUE_OFFSET));
    const { wallNowMs } = await import('../../clients/typescript/src/clock.js');
    const got = wallNowMs();
    expect(Math.abs(got - (mono + TRUE_OFFSET))).toBeLessThan(0.01);
  });
});
