/**
 * FastLane — the in-memory half of the two lanes (DESIGN "The two lanes",
 * "Firing"): the runs of owned shards due within the load window, and the
 * one timer that fires them.
 *
 * Owns: a RunHeap (monotonic deadlines), a FireTimer armed for its head, and
 * a ClockWatch that converts wall-clock due times to deadlines and re-bases
 * the heap when the wall clock steps. It does no I/O: `onFire` receives the
 * due entries and does the claim (an async, fenced UPDATE) itself.
 *
 * States:
 *   idle     constructed; offers are accepted and kept, nothing fires
 *   running  start(): clock watch ticking, timer armed for the head
 *   stopped  stop(): timers cleared, memory dropped; later offers are ignored
 *
 * Invariants:
 * - Never early (I-3). An entry is handed to onFire only once the monotonic
 *   clock passed its deadline AND the wall clock reads >= its dueAtMs. An
 *   entry that passes the first test but not the second (the wall clock
 *   stepped back and the watch has not noticed yet) is re-offered for the
 *   remaining wall time instead.
 * - One timer for the whole lane (plus the clock watch's), never one per run.
 * - Memory is a cache of Postgres. Dropping an entry (cancel, dropShard,
 *   stop) loses nothing; the loader rebuilds it from `job_runs`.
 */
import { type Clock, systemClock } from './clock.js';
import { type ClockStepStats, ClockWatch } from './clock-watch.js';
import { FireTimer } from './fire-timer.js';
import { RunHeap, type WindowEntry } from './run-heap.js';
import type { RunRef } from '../run-ref.js';

export interface FastLaneOptions {
  /** @defaultValue systemClock */
  clock?: Clock;
  /** Due entries, in fire order, with the wall time of the fire. Keep it quick: start async work and return. */
  onFire: (entries: WindowEntry[], firedAtWallMs: number) => void;
  /** Wake this many ms before a deadline, then spin. @defaultValue 2 */
  earlyMs?: number;
  /** false: no spinning, timers only (see FireTimer). @defaultValue true */
  spin?: boolean;
  clockWatch?: {
    /** @defaultValue 500 */
    intervalMs?: number;
    /** @defaultValue 25 */
    stepThresholdMs?: number;
  };
  /** Told after the heap was re-based for a wall-clock step of `deltaMs`. */
  onClockStep?: (deltaMs: number) => void;
  /** Fire this many ms before each run's due time (the claim-ahead lane). @defaultValue 0 */
  leadMs?: number;
  /** Fire runs in buckets: each fire also takes runs up to this many ms later (must be ≤ leadMs). @defaultValue 0 */
  gatherMs?: number;
}


type LaneState = 'idle' | 'running' | 'stopped';

export class FastLane {
  private readonly clock: Clock;
  private readonly heap = new RunHeap();
  private readonly watch: ClockWatch;
  private readonly timer: FireTimer;
  private readonly onFire: FastLaneOptions['onFire'];
  private readonly onClockStep: FastLaneOptions['onClockStep'];
  private state: LaneState = 'idle';
  private readonly leadMs: number;
  private readonly gatherMs: number;

  constructor(opts: FastLaneOptions) {
    this.clock = opts.clock ?? systemClock;
    this.onFire = opts.onFire;
    this.onClockStep = opts.onClockStep;
    this.leadMs = opts.leadMs ?? 0;
    this.gatherMs = Math.min(opts.gatherMs ?? 0, this.leadMs);
    this.watch = new ClockWatch(this.clock, { ...opts.clockWatch, onStep: (delta) => this.rebase(delta) });
    this.timer = new FireTimer(this.clock, this.heap, (due) => this.fire(due), { earlyMs: opts.earlyMs, gatherMs: this.gatherMs, spin: opts.spin });
  }

  /** Adds or reschedules a run (same runId, new due time replaces it). */
  offer(run: RunRef): void {
    if (!Number.isFinite(run.dueAtMs)) throw new RangeError(`offer: dueAtMs must be finite, got ${run.dueAtMs}`);
    if (this.state === 'stopped') return;
    // Fields, not an object: the loader offers a million runs when it rebuilds a window.
    this.heap.add(run.runId, run.shard, run.dueAtMs, run.priority, this.watch.toDeadline(run.dueAtMs - this.leadMs));
    if (this.state === 'running') this.timer.poke();
  }

  /** Forgets a run. The timer is left alone: a gate that wakes for nothing just re-arms. */
  cancel(runId: number): boolean {
    return this.heap.remove(runId);
  }

  /** Forgets every run of a shard (ownership lost). Returns how many. */
  dropShard(shard: number): number {
    return this.heap.removeShard(shard);
  }

  has(runId: number): boolean {
    return this.heap.has(runId);
  }

  get size(): number {
    return this.heap.size;
  }

  sizeOfShard(shard: number): number {
    return this.heap.sizeOfShard(shard);
  }

  /** O(in-window runs): for admin calls, not hot paths. */
  earliestDueOfShard(shard: number): number | undefined {
    return this.heap.earliestDueOfShard(shard);
  }

  /**
   * How long until a due time, ms with a fraction, for a run handed to a
   * worker to hold (staging): by the lane's monotonic deadline, which the
   * baseline puts a hair late (never short). Should the wall clock have
   * stepped back since the baseline (it reads over a millisecond behind it:
   * more than Date.now()'s truncation) and the watch not noticed yet, the
   * deadline would be short by that step: then the wall clock's own reading
   * counts, rounded up (the truncated reading is at most the true time, so
   * due − reading is never short).
   */
  untilDue(dueAtMs: number): number {
    const mono = this.clock.monoNow();
    const wall = this.clock.wallNow();
    const byDeadline = this.watch.toDeadline(dueAtMs) - mono;
    const steppedBack = wall - mono < this.watch.offsetMs - 1;
    return steppedBack ? Math.max(byDeadline, dueAtMs - wall) : byDeadline;
  }

  /** Wall-clock steps seen, for metrics. */
  get clockSteps(): Readonly<ClockStepStats> {
    return this.watch.stats;
  }

  start(): void {
    if (this.state === 'stopped') throw new Error('FastLane: cannot start after stop');
    if (this.state === 'running') return;
    this.state = 'running';
    this.watch.start(); // may re-base if the clock stepped since construction
    this.timer.poke();
  }

  stop(): void {
    this.state = 'stopped';
    this.timer.stop();
    this.watch.stop();
    this.heap.clear();
  }

  private rebase(deltaMs: number): void {
    this.heap.rebase((e) => this.watch.toDeadline(e.dueAtMs - this.leadMs));
    // Deadlines may have moved later, which a poke (earlier-only) cannot follow.
    if (this.state === 'running') this.timer.reset();
    this.onClockStep?.(deltaMs);
  }

  private fire(due: WindowEntry[]): void {
    const wall = this.clock.wallNow();
    let ready = due;
    const lead = this.leadMs + this.gatherMs; // how early a run may leave this lane
    if (due.some((e) => e.dueAtMs - lead > wall)) {
      ready = due.filter((e) => e.dueAtMs - lead <= wall);
      const early = due.filter((e) => e.dueAtMs - lead > wall);
      // The wall clock went back under us. Give the watch a chance to see it
      // as a step (re-basing everything else), then hold these few back by
      // exactly the wall time they still lack. The timer re-arms after we return.
      this.watch.check();
      for (const e of early) this.heap.push({ ...e, deadline: this.watch.freshDeadline(e.dueAtMs - lead) });
    }
    if (ready.length > 0) this.onFire(ready, wall);
  }
}
