/**
 * ClockWatch — converts wall-clock due times into monotonic deadlines and
 * notices when the wall clock steps (DESIGN I-3).
 *
 * Owns: the baseline offset (wallNow − monoNow) that every heap deadline was
 * computed with, and one periodic check timer.
 *
 * States: idle (constructed; baseline measured) → running (start) → idle
 * (stop). `check()` may also be called directly, e.g. when a fire looks early
 * by the wall clock.
 *
 * Why a fixed baseline rather than following every sample: NTP slewing
 * (adjtime) speeds up or slows down CLOCK_REALTIME and CLOCK_MONOTONIC alike,
 * so the offset does not move while the clock is slewed. It moves only when
 * the wall clock is *stepped* (settimeofday, chrony makestep, VM resume,
 * suspend). Between samples the offset also jitters by up to 1 ms because
 * Date.now() truncates to whole ms. So small differences are noise and are
 * ignored — but they are measured against the baseline, not against the last
 * sample, so several small moves cannot add up unnoticed: as soon as the
 * total passes `stepThresholdMs` it is handled as one step. Every deadline in
 * the heap is therefore within `stepThresholdMs` of the true wall clock, and
 * all of them share one offset (a rebase is all-or-nothing).
 *
 * The truncation also errs on the safe side: a baseline measured with a
 * truncated Date.now() is at most 1 ms *below* the true offset, which makes
 * deadlines up to 1 ms late, never early. The baseline itself (at start and
 * after a step) is therefore taken at an edge of Date.now(): spinning about
 * 1 ms (at most 3 ms) for the wall clock's next whole millisecond, bracketed
 * by two monotonic reads, it is within a few µs, and is then set BASELINE_LATE_MS
 * low so deadlines stay just late (the lane's wall-clock guard would hold
 * back a run fired a hair early, for a whole millisecond). Without that,
 * each daemon's deadlines were a random 0–1 ms late, fixed from its start
 * (bench/README.md). A clock that never gives a tight bracket gets the plain
 * sample: late, never early.
 */
import type { Clock, TimerHandle } from './clock.js';

/** How late the edge-measured baseline puts deadlines, ms. */
export const BASELINE_LATE_MS = 0.1;
/** An edge bracketed by monotonic reads further apart than this (the thread was preempted) is not trusted. */
const EDGE_MAX_GAP_MS = 0.05;
/** A wall clock that does not tick within this many reads (a fake clock) gives the plain sample. */
const EDGE_MAX_READS = 200_000;
/** Edges tried for a tight bracket (each waits up to ~1 ms). */
const EDGE_TRIES = 3;

export interface ClockWatchOptions {
  /** How often to compare wall against monotonic time, ms. @defaultValue 500 */
  intervalMs?: number;
  /** Offset change (ms, either direction) treated as a step. @defaultValue 25 */
  stepThresholdMs?: number;
  /** Called after the baseline moved; deadlines must be recomputed. */
  onStep?: (deltaMs: number) => void;
}

/** Last measured wall-clock step, for metrics. */
export class ClockStepStats {
  /** Signed size of the last step, ms (positive: wall clock jumped forward). */
  lastStepMs = 0;
  /** Wall time at which the last step was noticed, epoch ms (0: none yet). */
  lastStepAtWallMs = 0;
  /** Steps seen since start. */
  steps = 0;

  record(deltaMs: number, atWallMs: number): void {
    this.lastStepMs = deltaMs;
    this.lastStepAtWallMs = atWallMs;
    this.steps++;
  }
}

export class ClockWatch {
  readonly stats = new ClockStepStats();
  private readonly intervalMs: number;
  private readonly stepThresholdMs: number;
  private readonly onStep: ((deltaMs: number) => void) | undefined;
  private baseline: number;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    opts: ClockWatchOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 500;
    this.stepThresholdMs = opts.stepThresholdMs ?? 25;
    if (!(this.intervalMs > 0)) throw new RangeError(`clockWatch.intervalMs must be > 0, got ${this.intervalMs}`);
    // Under 1 ms every check would see the truncation of Date.now() as a step (and re-measure, spinning).
    if (!(this.stepThresholdMs >= 1)) {
      throw new RangeError(`clockWatch.stepThresholdMs must be >= 1, got ${this.stepThresholdMs}`);
    }
    this.onStep = opts.onStep;
    this.baseline = this.measureAtEdge();
  }

  /** The offset (wall − monotonic, ms) every current deadline was computed with. */
  get offsetMs(): number {
    return this.baseline;
  }

  get lastStepMs(): number {
    return this.stats.lastStepMs;
  }

  get steps(): number {
    return this.stats.steps;
  }

  /** Monotonic deadline for a wall-clock due time, using the baseline. */
  toDeadline(dueAtMs: number): number {
    return dueAtMs - this.baseline;
  }

  /**
   * Monotonic deadline from a fresh sample, ignoring the baseline: for a run
   * that just looked early by the wall clock, whose baseline deadline has
   * already passed.
   */
  freshDeadline(dueAtMs: number): number {
    return dueAtMs - this.measure();
  }

  /** Samples the offset now; on a step, moves the baseline and calls onStep. Returns the step (0: none). */
  check(): number {
    const measured = this.measure();
    const delta = measured - this.baseline;
    if (Math.abs(delta) <= this.stepThresholdMs) return 0;
    this.baseline = this.measureAtEdge();
    this.stats.record(delta, this.clock.wallNow());
    this.onStep?.(delta);
    return delta;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.check();
    this.schedule();
  }

  stop(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(() => {
      this.check();
      // check() may have run onStep, which may have stopped us.
      if (this.timer !== undefined) this.schedule();
    }, this.intervalMs);
  }

  private measure(): number {
    return this.clock.wallNow() - this.clock.monoNow();
  }

  /**
   * The offset at an edge of the wall clock's whole milliseconds, BASELINE_LATE_MS low; else `measure()`.
   * The edge falls between the last wall read that still saw the old value and
   * the first that saw the new one; the monotonic reads just before the one and
   * just after the other bracket it. Up to EDGE_TRIES edges are tried for a
   * bracket under EDGE_MAX_GAP_MS (a preemption between the reads widens it).
   */
  private measureAtEdge(): number {
    let best = Infinity;
    let bestOffset = 0;
    for (let edge = 0; edge < EDGE_TRIES && best > EDGE_MAX_GAP_MS; edge++) {
      let lower = this.clock.monoNow();
      const start = this.clock.wallNow();
      let ticked = false;
      for (let i = 0; i < EDGE_MAX_READS; i++) {
        const mono = this.clock.monoNow();
        const wall = this.clock.wallNow();
        if (wall !== start) {
          const upper = this.clock.monoNow();
          if (wall - start === 1 && upper - lower < best) {
            best = upper - lower;
            bestOffset = wall - (lower + upper) / 2;
          }
          ticked = true;
          break;
        }
        if (mono - lower > 5) break; // the thread stalls: no edge worth waiting for
        lower = mono;
      }
      if (!ticked) break; // a clock that does not tick (a fake one)
    }
    return best <= EDGE_MAX_GAP_MS ? bestOffset - BASELINE_LATE_MS : this.measure();
  }
}
