/**
 * JIT tuning for a process that must keep up with a high rate from its
 * start. V8 optimises a function once it has spent its "interrupt budget"
 * in the interpreter (67,584 by default): a freshly started process runs its
 * hot path unoptimised for its first second or more of load. Measured on a
 * 2-core VM, steady 10,000 runs/s against a cold daemon and worker: the
 * first second's p99 lag fell from 190–412 ms to 27–89 ms with both at
 * 2,000; at 1,000 runs/s from cold, the early compiling raised the p99
 * from 7 to 13–27 ms (bench/README.md). A trade, not a default.
 */
import v8 from 'node:v8';

/** V8's interrupt budget set by tuneJitForLatency unless told otherwise. */
export const LATENCY_INTERRUPT_BUDGET = 2_000;

/**
 * Makes V8 optimise hot functions sooner, for the whole process: call once,
 * at start, in a worker that must keep up with a burst from its first
 * second. It changes only when code is optimised, not what it does; the
 * price is more compiling in the first seconds. `budget` 100..10,000,000.
 */
export function tuneJitForLatency(budget: number = LATENCY_INTERRUPT_BUDGET): void {
  if (!Number.isInteger(budget) || budget < 100 || budget > 10_000_000) throw new RangeError(`budget: must be an integer in 100..10000000 (got ${budget})`);
  v8.setFlagsFromString(`--interrupt-budget=${budget}`);
}
