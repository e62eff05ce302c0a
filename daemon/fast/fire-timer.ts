/**
 * FireTimer — the timer gate (after Temporal's `common/timer/gate.go`): one
 * timer, armed for the heap head, never one per run.
 *
 * Owns: at most one timer or one immediate at a time, and the deadline it is
 * armed for.
 *
 * States:
 *   idle      nothing armed (heap empty, or nothing pushed since)
 *   sleeping  a timer set `earlyMs` before the armed deadline
 *   spinning  under 1 ms + earlyMs from the deadline, polling with
 *             setImmediate until monoNow() >= deadline
 *   firing    inside onDue; pokes are ignored and the gate re-arms afterwards
 *   stopped   terminal
 *
 * Why sleep-then-spin: Node's setTimeout fires up to ~1 ms early and
 * truncates fractional delays (nodejs/node#26578). Waking `earlyMs` early and
 * polling with setImmediate gave 0 early fires and p99 lag 0.4 ms.
 *
 * Why `spin: false` exists: a gate whose deadlines are always under
 * `earlyMs` apart (the release gate at 1,000 runs/s) would spin for good — a
 * whole core on a 2-core machine, taken from Postgres and the workers. Without
 * spinning, an early wake sleeps again for the rounded-up rest (≥ 1 ms): never
 * early, and on average under a millisecond late.
 *
 * Invariants:
 * - An entry reaches onDue only once monoNow() >= its deadline.
 * - The gate only moves earlier on poke(). When the head gets later (cancel,
 *   tombstoned head) the gate wakes at the old time, finds nothing due and
 *   re-arms: cheaper than re-arming on every cancel.
 * - Sleeps are clamped to 2^31−1 ms (Node turns longer delays into 1 ms);
 *   a clamped wake just re-checks.
 */
import type { Clock, ImmediateHandle, TimerHandle } from './clock.js';
import type { RunHeap, WindowEntry } from './run-heap.js';

/** Longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface FireTimerOptions {
  /** Wake this many ms before the deadline, then spin. @defaultValue 2 */
  earlyMs?: number;
  /** Most entries handed to one onDue call; the rest follow on the next turn of the event loop. @defaultValue 5000 */
  maxBatch?: number;
  /**
   * On each fire, also take entries due within this many ms after now, so
   * work is done in buckets (the claim-ahead lane batches its claims this way;
   * only use it where firing a little before the deadline is the point). @defaultValue 0
   */
  gatherMs?: number;
  /** Poll with setImmediate for the last `earlyMs` (sub-ms precision, burns CPU); false: timers only. @defaultValue true */
  spin?: boolean;
}

export type OnDue = (due: WindowEntry[], firedAtMono: number) => void;

export class FireTimer {
  private readonly earlyMs: number;
  private readonly maxBatch: number;
  private readonly gatherMs: number;
  private readonly spin: boolean;
  private timer: TimerHandle | undefined;
  private immediate: ImmediateHandle | undefined;
  private armedFor: number | undefined;
  private firing = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly heap: RunHeap,
    private readonly onDue: OnDue,
    opts: FireTimerOptions = {},
  ) {
    this.earlyMs = opts.earlyMs ?? 2;
    this.maxBatch = opts.maxBatch ?? 5000;
    this.gatherMs = opts.gatherMs ?? 0;
    this.spin = opts.spin ?? true;
    if (!(this.earlyMs >= 0)) throw new RangeError(`earlyMs must be >= 0, got ${this.earlyMs}`);
    if (!(this.maxBatch >= 1)) throw new RangeError(`maxBatch must be >= 1, got ${this.maxBatch}`);
  }

  /** Monotonic deadline the gate is armed for, if any. */
  get armedDeadline(): number | undefined {
    return this.armedFor;
  }

  /** Call after pushes: arms for the head if it is earlier than the gate. */
  poke(): void {
    if (this.stopped || this.firing) return;
    const head = this.heap.peek();
    if (head === undefined) return;
    if (this.armedFor === undefined || head.deadline < this.armedFor) this.arm(head.deadline);
  }

  /** Re-arms from scratch, for when deadlines moved later too (a rebase). */
  reset(): void {
    if (this.stopped || this.firing) return;
    this.disarm();
    this.poke();
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private arm(deadline: number): void {
    this.disarm();
    this.schedule(deadline, this.clock.monoNow());
  }

  /** Sleeps until `earlyMs` before the deadline, or spins if that is under 1 ms away. */
  private schedule(deadline: number, now: number): void {
    this.armedFor = deadline;
    if (!this.spin) {
      this.timer = this.clock.setTimer(this.wake, Math.min(Math.max(1, Math.ceil(deadline - now)), MAX_TIMER_MS));
      return;
    }
    const sleep = deadline - now - this.earlyMs;
    // setTimeout cannot sleep less than 1 ms (Node rounds it up), so a shorter
    // sleep would overshoot: poll instead.
    if (sleep < 1) this.immediate = this.clock.setImmediate(this.wake);
    else this.timer = this.clock.setTimer(this.wake, Math.min(sleep, MAX_TIMER_MS));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    if (this.immediate !== undefined) this.clock.clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.armedFor = undefined;
  }

  private readonly wake = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    if (this.stopped) return;
    const head = this.heap.peek();
    if (head === undefined) {
      this.armedFor = undefined;
      return;
    }
    const now = this.clock.monoNow();
    // Not due yet: the platform timer woke early (by design or by Node), the
    // sleep was clamped, or the head we slept for was cancelled. Sleep again
    // or spin, whichever is nearer.
    if (head.deadline > now) this.schedule(head.deadline, now);
    else this.fire(now);
  };

  private fire(now: number): void {
    this.armedFor = undefined;
    this.firing = true;
    try {
      const due = this.heap.popDue(now + this.gatherMs, this.maxBatch);
      if (due.length > 0) this.onDue(due, now);
    } finally {
      this.firing = false;
      // Whatever onDue pushed, and anything past maxBatch, is picked up here.
      this.poke();
    }
  }
}
