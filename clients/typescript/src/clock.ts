/**
 * Wall-clock time with sub-millisecond resolution, for measuring fire lag at
 * the worker (receipt - due_at). `Date.now()` truncates to whole ms, and
 * `performance.timeOrigin + performance.now()` drifts from the wall clock on a
 * long-lived process (it never follows NTP).
 *
 * State: one anchor pairing a wall-clock instant with a monotonic reading,
 * taken right as `Date.now()` ticks over, bracketed by two monotonic reads
 * close together (so the wall value is exact to a few µs). Invariant: a returned value agrees with `Date.now()` to within the
 * truncation window (± `TOLERANCE_MS`); when it does not (clock step, drift),
 * the anchor is re-taken, which spins for at most ~1 ms.
 */
import { performance } from 'node:perf_hooks';

const TOLERANCE_MS = 1;
/** An edge whose two bracketing monotonic reads are further apart than this (the process was preempted) is not trusted. */
const MAX_BRACKET_MS = 0.05;
/** Edges tried for a tight bracket before the best one so far is taken. */
const EDGES = 3;

let anchorWall = 0;
let anchorMono = 0;

/**
 * Pairs the wall clock with the monotonic one at a tick of `Date.now()`: the
 * tick fell between two monotonic reads, and their midpoint is the pairing.
 * A pairing whose reads were far apart (preempted between them) would stay
 * up to 1 ms off for good (it is re-taken only past TOLERANCE_MS), so up to
 * EDGES ticks are tried for a tight one; each costs at most ~1 ms of spinning.
 */
function reanchor(): void {
  let bestGap = Infinity;
  for (let edge = 0; edge < EDGES && bestGap > MAX_BRACKET_MS; edge++) {
    // `lower` is read just before the last Date.now() that still shows `start`; `upper` just after the first that does not.
    const spinFrom = performance.now();
    let lower = spinFrom;
    const start = Date.now();
    let wall = start;
    let mono = spinFrom;
    // Wait for the next tick of Date.now(); give up after 5 ms, or 200,000 reads (a frozen or mocked clock).
    for (let reads = 0; mono - spinFrom < 5 && reads < 200_000; reads++) {
      mono = performance.now();
      wall = Date.now();
      if (wall !== start) break;
      lower = mono;
    }
    if (wall === start) break; // the clock does not tick: keep what we have
    const upper = performance.now();
    if (upper - lower < bestGap) {
      bestGap = upper - lower;
      anchorWall = wall;
      anchorMono = (lower + upper) / 2;
    }
  }
  if (bestGap === Infinity) {
    anchorWall = Date.now();
    anchorMono = performance.now();
  }
}

/** Epoch milliseconds on the wall clock, with a fractional part. */
export function wallNowMs(): number {
  if (anchorWall === 0) reanchor();
  let estimate = anchorWall + (performance.now() - anchorMono);
  const coarse = Date.now();
  if (estimate < coarse - TOLERANCE_MS || estimate >= coarse + 1 + TOLERANCE_MS) {
    reanchor();
    estimate = anchorWall + (performance.now() - anchorMono);
  }
  return estimate;
}
