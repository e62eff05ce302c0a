/**
 * Runs handed to this worker ahead of their due time (staging: Subscribe's
 * stage_ahead_ms), held until they may start. The daemon sends each with the
 * time it saw left until due (`startInMs`); the hold is counted on this
 * process's monotonic clock from the message's arrival, so it ends at or
 * after the due time as the daemon's clock has it, whatever this machine's
 * wall clock says.
 *
 * Owns: the held runs in start order, each with the stream that brought it,
 * and one timer armed for the earliest.
 *
 * States of a run here: held → started (handed to `onStart`, in start order)
 * | taken (cancelled, or a newer delivery of it arrived: `take`, or an `add`
 * of the same run id) | dropped (its stream ended: `dropFrom`). At most one
 * copy of a run is held.
 * States of the holder: holding (timer armed while a run is held) →
 * closed (`clear`: nothing held, no timer; later adds are ignored).
 *
 * Invariant: a run reaches onStart only once performance.now() has passed
 * its start time. Node's setTimeout may wake a little early (it counts from
 * the event loop's cached time), so a wake that finds the first run not due
 * yet sleeps again for the rest, rounded up: late by under a timer tick,
 * never early. One timer for all runs, never one per run.
 */
import type { DeliveredRunInfo } from './types.js';

/** The clock a holder runs on (injected in tests). */
export interface HoldClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: HoldClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

interface Held<S> {
  run: DeliveredRunInfo;
  /** performance.now() at or after which it may start. */
  startAt: number;
  stream: S;
  /** Taken back (take): skipped when its time comes. */
  taken: boolean;
}

export class StagedRuns<S> {
  /** Held runs by start time; `head` is the first not started yet (the array is compacted as it empties). */
  private held: Held<S>[] = [];
  private head = 0;
  /** The held runs by id (one entry each: a newer delivery of a run replaces the older, see take). */
  private readonly byRun = new Map<string, Held<S>>();
  private timer: unknown;
  private armedFor = Infinity;
  private closed = false;

  constructor(
    private readonly onStart: (run: DeliveredRunInfo) => void,
    private readonly clock: HoldClock = realClock,
  ) {}

  get size(): number {
    return this.byRun.size;
  }

  /** Holds `run` until `startInMs` after `arrivedAt` (its arrival, on this holder's clock), then hands it to onStart. */
  add(run: DeliveredRunInfo, stream: S, arrivedAt = this.clock.now()): void {
    if (this.closed) return;
    this.take(run.runId);
    const entry = { run, startAt: arrivedAt + run.startInMs, stream, taken: false };
    this.byRun.set(run.runId, entry);
    // Runs come in start order almost always: insertion from the end is O(1) then.
    let i = this.held.length;
    while (i > this.head && this.held[i - 1].startAt > entry.startAt) i--;
    this.held.splice(i, 0, entry);
    if (entry.startAt < this.armedFor) this.arm();
  }

  /** Takes a held run back (cancelled, or a newer delivery of it came); undefined if it is not held. O(1): it is skipped when its time comes. */
  take(runId: string): DeliveredRunInfo | undefined {
    const h = this.byRun.get(runId);
    if (!h) return undefined;
    h.taken = true;
    this.byRun.delete(runId);
    return h.run;
  }

  /** Drops the runs a stream brought, except those `keep` names; returns the dropped ones. */
  dropFrom(stream: S, keep: (run: DeliveredRunInfo) => boolean = () => false): DeliveredRunInfo[] {
    const dropped: DeliveredRunInfo[] = [];
    const kept: Held<S>[] = [];
    for (let i = this.head; i < this.held.length; i++) {
      const h = this.held[i];
      if (h.taken) continue;
      if (h.stream === stream && !keep(h.run)) {
        dropped.push(h.run);
        this.byRun.delete(h.run.runId);
      } else kept.push(h);
    }
    this.held = kept;
    this.head = 0;
    return dropped;
  }

  /** Forgets every held run and stops the timer for good. */
  clear(): DeliveredRunInfo[] {
    this.closed = true;
    const out = [...this.byRun.values()].map((h) => h.run);
    this.held = [];
    this.head = 0;
    this.byRun.clear();
    this.disarm();
    return out;
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  private arm(): void {
    this.disarm();
    if (this.closed || this.head >= this.held.length) return;
    const first = this.held[this.head].startAt;
    this.armedFor = first;
    this.timer = this.clock.setTimeout(this.wake, Math.max(1, Math.ceil(first - this.clock.now())));
  }

  private readonly wake = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = this.clock.now();
    const due: DeliveredRunInfo[] = [];
    while (this.head < this.held.length && this.held[this.head].startAt <= now) {
      const h = this.held[this.head++];
      if (h.taken) continue;
      this.byRun.delete(h.run.runId);
      due.push(h.run);
    }
    // Started runs (and their payloads) are let go: all at once when none is left, else once they are most of the array.
    if (this.head === this.held.length) {
      this.held = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
    // Armed before the handlers run: a timer counts from the event loop's cached
    // time, which the handlers would leave stale (the next wake would be early, then
    // sleep a whole extra millisecond).
    this.arm();
    for (const run of due) this.onStart(run);
  };
}

/** The transit floor's memory: the least delay of the last one to two of these windows counts. */
const FLOOR_WINDOW_MS = 1_000;
/**
 * Margin kept out of the correction: the two monotonic clocks may drift apart
 * by this much over two windows (25 ppm) without a run starting early.
 */
const FLOOR_MARGIN_MS = 0.05;

/**
 * How much of a staged batch's transit to take out of its runs' holds (see
 * RunBatch.sent_mono_ms). A batch's delay d (arrival on this process's
 * monotonic clock − the daemon's monotonic send time) is the clocks' offset
 * plus its transit; the least d seen lately is the offset plus the fastest
 * transit. A run held `startInMs − (d − least)` from its arrival therefore
 * starts when its due time has come on the daemon's clock, plus that fastest
 * transit: this batch's own slowness (a busy daemon, network, this worker's
 * busy event loop) is not added to the hold.
 *
 * State: the least d of the current window and of the one before. A window
 * older than that is forgotten (the clocks may have drifted since).
 */
export class TransitFloor {
  private current = Infinity;
  private previous = Infinity;
  private windowStart = -Infinity;

  /** This batch's delay beyond the fastest lately, ms (≥ 0): how much shorter its holds may be. */
  excess(delayMs: number, nowMono: number = performance.now()): number {
    const age = nowMono - this.windowStart;
    if (age >= FLOOR_WINDOW_MS) {
      this.previous = age >= 2 * FLOOR_WINDOW_MS ? Infinity : this.current;
      this.current = Infinity;
      this.windowStart = nowMono;
    }
    if (delayMs < this.current) this.current = delayMs;
    return Math.max(0, delayMs - Math.min(this.current, this.previous) - FLOOR_MARGIN_MS);
  }
}
