/**
 * PreciseWake on the real clock: a wake never comes before its deadline,
 * comes once, and a later arm() or a disarm() retires the earlier arming.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PreciseWake } from '../../daemon/fast/precise-wake.js';

const now = (): number => performance.now();
const waitFor = async (cond: () => boolean, ms: number): Promise<boolean> => {
  const until = now() + ms;
  while (!cond() && now() < until) await new Promise((r) => setTimeout(r, 1));
  return cond();
};

describe('PreciseWake', () => {
  let w: PreciseWake | undefined;
  afterEach(() => w?.stop());

  it('calls back once, never before the deadline', async () => {
    w = new PreciseWake(now);
    const calls: number[] = [];
    for (let i = 0; i < 20; i++) {
      const deadline = now() + 2.3 + (i % 5) * 0.37; // fractional deadlines, between timer ticks
      const before = calls.length;
      w.arm(deadline, () => calls.push(now() - deadline));
      expect(await waitFor(() => calls.length > before, 1_000)).toBe(true);
    }
    expect(calls).toHaveLength(20);
    expect(Math.min(...calls)).toBeGreaterThanOrEqual(-0.01); // the two clocks are paired within µs
  });

  it('a later arm() replaces the earlier one; disarm() retires it', async () => {
    w = new PreciseWake(now);
    const got: string[] = [];
    w.arm(now() + 30, () => got.push('first'));
    w.arm(now() + 3, () => got.push('second'));
    expect(await waitFor(() => got.length > 0, 1_000)).toBe(true);
    w.arm(now() + 5, () => got.push('disarmed'));
    w.disarm();
    await new Promise((r) => setTimeout(r, 60));
    expect(got).toEqual(['second']);
  });

  it('is unusable once stopped, and calls nothing after', async () => {
    w = new PreciseWake(now);
    const got: string[] = [];
    w.arm(now() + 5, () => got.push('x'));
    w.stop();
    expect(w.usable).toBe(false);
    w.arm(now() + 1, () => got.push('y'));
    await new Promise((r) => setTimeout(r, 30));
    expect(got).toEqual([]);
  });
});
