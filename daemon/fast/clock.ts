/**
 * The injected clock. Deadlines are monotonic (`monoNow`, ms since an
 * arbitrary origin, never steps); due times are wall-clock epoch ms. Unit
 * tests drive a fake implementation (test/helpers/fake-clock.ts).
 */
export type TimerHandle = { readonly __timer: unique symbol } | NodeJS.Timeout;
export type ImmediateHandle = { readonly __immediate: unique symbol } | NodeJS.Immediate;

export interface Clock {
  /** Wall clock, epoch ms (may step under NTP). */
  wallNow(): number;
  /** Monotonic clock, ms with sub-ms fraction. */
  monoNow(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  setImmediate(fn: () => void): ImmediateHandle;
  clearImmediate(handle: ImmediateHandle): void;
}

export const systemClock: Clock = {
  wallNow: () => Date.now(),
  monoNow: () => performance.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    return t;
  },
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
  setImmediate: (fn) => setImmediate(fn),
  clearImmediate: (h) => clearImmediate(h as NodeJS.Immediate),
};
