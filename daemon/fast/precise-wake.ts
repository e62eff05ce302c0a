/**
 * PreciseWake — wakes the main thread at a monotonic deadline to within a
 * fraction of a millisecond, without spinning it: one helper thread sleeps
 * with Atomics.wait (which takes fractional milliseconds) and posts a message
 * at the deadline. Node's timers fire only on libuv's whole-millisecond
 * ticks, so a timer-only gate is late by the phase between those ticks and
 * its deadlines: for whole-millisecond due times, a random 0–1 ms fixed when
 * the daemon starts (bench/README.md). Spinning closes that at the cost of a
 * core; this costs a futex wait and a message per wake.
 *
 * States: idle (nothing armed: the thread waits for an arming) → armed (the
 * thread sleeps until the deadline, or until it is re-armed or disarmed) →
 * fired (the message is on its way; `fn` runs on the main thread if that
 * arming is still the current one) → idle; stopped (the thread exits) is
 * terminal.
 *
 * Invariants:
 * - `fn` of an arming runs at most once, and never after disarm() or a later
 *   arm(): each arming has a generation, and a message of an older one is
 *   dropped.
 * - The thread's clock is the main thread's monotonic clock moved onto
 *   process.hrtime (shared by all threads), re-paired at each arm. The caller
 *   (FireTimer) still checks its deadline against its own clock on wake, so a
 *   wake a hair early only re-arms.
 */
import { Worker } from 'node:worker_threads';

/** The helper thread (CommonJS, run with `eval`: no file to resolve under a bundler or test runner). */
const THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const ctl = new Int32Array(workerData, 0, 2); // [0] generation of the arming (wraps), [1] 1 = stop
const target = new Float64Array(workerData, 8, 1);
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
let posted = 0;
for (;;) {
  const g = Atomics.load(ctl, 0);
  if (Atomics.load(ctl, 1) === 1) break;
  const t = target[0];
  if (g === posted || !(t > 0)) { Atomics.wait(ctl, 0, g); continue; }
  const left = t - nowMs();
  if (left > 0) { Atomics.wait(ctl, 0, g, left); continue; }
  posted = g;
  parentPort.postMessage(g);
}
`;

export class PreciseWake {
  private readonly shared = new SharedArrayBuffer(16);
  private readonly ctl = new Int32Array(this.shared, 0, 2);
  private readonly target = new Float64Array(this.shared, 8, 1);
  private readonly worker: Worker;
  private current = 0;
  private fn: (() => void) | null = null;
  private stopped = false;

  /** `monoNow`: the caller's monotonic clock (ms), which deadlines are in. */
  constructor(private readonly monoNow: () => number) {
    this.worker = new Worker(THREAD, { eval: true, workerData: this.shared });
    this.worker.unref(); // a sleeping helper must not keep the process alive
    this.worker.on('message', (g: number) => {
      if (g !== this.current || !this.fn) return;
      const fn = this.fn;
      this.fn = null;
      fn();
    });
    this.worker.on('error', () => {
      // The thread died: every later arm() is refused and the caller uses its timers.
      this.stopped = true;
      this.fn = null;
    });
  }

  /** False once stopped or broken: the caller falls back to timers. */
  get usable(): boolean {
    return !this.stopped;
  }

  /** Calls `fn` on the main thread once the monotonic clock reaches `deadlineMono` (replaces any earlier arming). */
  arm(deadlineMono: number, fn: () => void): void {
    if (this.stopped) return;
    this.fn = fn;
    // Pair the two clocks now: both are monotonic, so their distance holds while the thread sleeps.
    this.target[0] = deadlineMono - this.monoNow() + Number(process.hrtime.bigint()) / 1e6;
    this.next();
  }

  disarm(): void {
    if (this.stopped || this.fn === null) return;
    this.fn = null;
    this.target[0] = 0;
    this.next();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.fn = null;
    Atomics.store(this.ctl, 1, 1);
    this.next();
    void this.worker.terminate();
  }

  /** A new generation (an Int32 that wraps, compared for equality only), and the thread told. */
  private next(): void {
    this.current = (Atomics.add(this.ctl, 0, 1) + 1) | 0;
    Atomics.notify(this.ctl, 0);
  }
}
