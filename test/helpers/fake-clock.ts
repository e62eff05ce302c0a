/**
 * A deterministic Clock for unit tests of the fast lane.
 *
 * Models the parts of Node's event loop the fire timer depends on:
 * - timers run in (due time, creation order); delays are truncated to whole
 *   ms (at least 1) as Node does, and `timerEarlyMs` makes them fire that much early,
 *   like nodejs/node#26578, so tests can prove the spin step is needed;
 * - immediates run in rounds after timers, and each round costs
 *   `immediateCostMs` of time, so a setImmediate poll loop makes progress
 *   instead of looping forever at one instant; `advance` stops exactly at
 *   its target after one last round there;
 * - delays above 2^31−1 ms throw (Node would silently fire them after 1 ms).
 *
 * Wall and monotonic time advance together; `stepWall` moves only the wall
 * clock, as an NTP step does.
 */
import type { Clock, ImmediateHandle, TimerHandle } from '../../daemon/fast/clock.js';

export interface FakeClockOptions {
  /** @defaultValue 1_700_000_000_000 */
  wallStartMs?: number;
  /** @defaultValue 1_000 */
  monoStartMs?: number;
  /** Timers fire this many ms before their delay is up. @defaultValue 0 */
  timerEarlyMs?: number;
  /** Time one round of immediates takes. @defaultValue 0.0625 (a binary fraction: no float drift) */
  immediateCostMs?: number;
}

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

interface FakeImmediate {
  fn: () => void;
  cancelled: boolean;
}

const MAX_DELAY = 2 ** 31 - 1;
const MAX_STEPS = 10_000_000;

export class FakeClock implements Clock {
  private wall: number;
  private mono: number;
  private readonly timerEarlyMs: number;
  private readonly immediateCostMs: number;
  private readonly timers = new Set<FakeTimer>();
  private immediates: FakeImmediate[] = [];
  private seq = 0;
  /** Total setTimer calls, to check "one timer, not one per run". */
  timersSet = 0;

  constructor(opts: FakeClockOptions = {}) {
    this.wall = opts.wallStartMs ?? 1_700_000_000_000;
    this.mono = opts.monoStartMs ?? 1_000;
    this.timerEarlyMs = opts.timerEarlyMs ?? 0;
    this.immediateCostMs = opts.immediateCostMs ?? 0.0625;
  }

  wallNow(): number {
    return this.wall;
  }

  monoNow(): number {
    return this.mono;
  }

  /** Timers currently pending. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  get pendingImmediates(): number {
    return this.immediates.length;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    if (ms > MAX_DELAY) throw new RangeError(`FakeClock: delay ${ms} ms exceeds 2^31-1 (Node would fire after 1 ms)`);
    // Node: delays below 1 ms become 1, fractions are dropped; then the early
    // fire. A timer still takes at least one loop turn (immediateCostMs).
    const delay = Math.max(this.immediateCostMs, Math.max(1, Math.trunc(ms)) - this.timerEarlyMs);
    const timer: FakeTimer = { at: this.mono + delay, seq: this.seq++, fn };
    this.timers.add(timer);
    this.timersSet++;
    return timer as unknown as TimerHandle;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as unknown as FakeTimer);
  }

  setImmediate(fn: () => void): ImmediateHandle {
    const immediate: FakeImmediate = { fn, cancelled: false };
    this.immediates.push(immediate);
    return immediate as unknown as ImmediateHandle;
  }

  clearImmediate(handle: ImmediateHandle): void {
    const target = handle as unknown as FakeImmediate;
    // Flag it too: it may sit in the round that is running right now.
    target.cancelled = true;
    this.immediates = this.immediates.filter((i) => i !== target);
  }

  /** Moves both clocks forward by `ms`, running timers and immediates as they come due. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError('FakeClock.advance: ms must be >= 0');
    this.runUntil(this.mono + ms);
  }

  /** Advances to monotonic time `mono` (no-op if already past). */
  advanceTo(mono: number): void {
    this.runUntil(Math.max(mono, this.mono));
  }

  /** Runs what is runnable now without moving time: due timers and one round of immediates. */
  runImmediates(): void {
    this.runUntil(this.mono);
  }

  /** Jumps the wall clock without moving the monotonic clock (an NTP step). */
  stepWall(deltaMs: number): void {
    this.wall += deltaMs;
  }

  private runUntil(target: number): void {
    for (let steps = 0; ; steps++) {
      if (steps > MAX_STEPS) throw new Error('FakeClock: runaway event loop');
      const next = this.nextTimer();
      if (next !== undefined && next.at <= this.mono) {
        this.timers.delete(next);
        next.fn();
      } else if (this.immediates.length > 0) {
        // One round: only what was queued before it started, as in Node. The
        // round's cost is capped at the target, and a round that starts at the
        // target is the last one, so a poll loop ends instead of overshooting.
        const last = this.mono >= target;
        const round = this.immediates;
        this.immediates = [];
        for (const i of round) if (!i.cancelled) i.fn();
        if (last) break;
        this.moveBy(Math.min(this.immediateCostMs, target - this.mono));
      } else if (next !== undefined && next.at <= target) {
        this.moveBy(next.at - this.mono);
      } else {
        break;
      }
    }
    if (this.mono < target) this.moveBy(target - this.mono);
  }

  private nextTimer(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }

  private moveBy(ms: number): void {
    this.mono += ms;
    this.wall += ms;
  }
}
