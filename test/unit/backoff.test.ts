import { describe, expect, it } from 'vitest';
import { backoffMs, type BackoffPolicy } from '../../daemon/dispatch/backoff.js';
import { seeded } from '../helpers/seeded-random.js';

const policy: BackoffPolicy = { initialBackoffMs: 100, maxBackoffMs: 5_000 };


describe('backoffMs (exponential, full jitter, capped)', () => {
  it('the ceiling doubles per failed attempt from the initial backoff', () => {
    const top = () => 0.999_999_9;
    expect(backoffMs(1, policy, top)).toBe(99);
    expect(backoffMs(2, policy, top)).toBe(199);
    expect(backoffMs(3, policy, top)).toBe(399);
    expect(backoffMs(6, policy, top)).toBe(3_199);
  });

  it('is capped at maxBackoffMs, however many attempts failed', () => {
    const top = () => 0.999_999_9;
    expect(backoffMs(7, policy, top)).toBe(4_999); // 6400 capped to 5000
    expect(backoffMs(60, policy, top)).toBe(4_999);
    expect(backoffMs(5_000, policy, top)).toBe(4_999); // 2^4999 is Infinity: still capped, still finite
    expect(Number.isFinite(backoffMs(1e9, policy, top))).toBe(true);
  });

  it('full jitter: the wait scales with the random draw across [0, ceiling)', () => {
    expect(backoffMs(3, policy, () => 0.5)).toBe(200);
    expect(backoffMs(3, policy, () => 0.25)).toBe(100);
    expect(backoffMs(60, policy, () => 0.5)).toBe(2_500);
  });

  it('is never 0 (a retry does not land in the millisecond of its failure)', () => {
    expect(backoffMs(1, policy, () => 0)).toBe(1);
    expect(backoffMs(1, { initialBackoffMs: 0, maxBackoffMs: 0 }, () => 0.9)).toBe(1);
    expect(backoffMs(1, { initialBackoffMs: 1, maxBackoffMs: 1 }, () => 0.999)).toBe(1);
  });

  it('attempt numbers below 1 are treated as the first attempt', () => {
    const top = () => 0.999_999_9;
    expect(backoffMs(0, policy, top)).toBe(99);
    expect(backoffMs(-3, policy, top)).toBe(99);
  });

  it('sampled: every wait is a whole number in [1, min(cap, initial * 2^(n-1))] and the range is used', () => {
    const random = seeded(42);
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** (attempt - 1));
      const waits = Array.from({ length: 2_000 }, () => backoffMs(attempt, policy, random));
      const bad = waits.filter((w) => !Number.isInteger(w) || w < 1 || w > ceiling);
      expect(bad).toEqual([]);
      // Full jitter spreads over the whole range, not just near the top.
      expect(Math.min(...waits)).toBeLessThan(ceiling * 0.05 + 1);
      expect(Math.max(...waits)).toBeGreaterThan(ceiling * 0.95 - 1);
    }
  });

  it('uses Math.random by default, within bounds', () => {
    const waits = Array.from({ length: 1_000 }, () => backoffMs(4, policy));
    expect(waits.filter((w) => w < 1 || w > 800)).toEqual([]);
  });
});
