/**
 * Wall-clock time with sub-millisecond resolution, for measuring fire lag at
 * the worker (receipt - due_at). `Date.now()` truncates to whole ms, and
 * `performance.timeOrigin + performance.now()` drifts from the wall clock on a
 * long-lived process (it never follows NTP).
 *
 * State: one anchor pairing a wall-clock instant with a monotonic reading,
 * taken right as `Date.now()` ticks over (so the wall value is exact to a few
 * µs). Invariant: a returned value agrees with `Date.now()` to within the
 * truncation window (± `TOLERANCE_MS`); when it does not (clock step, drift),
 * the anchor is re-taken, which spins for at most ~1 ms.
 */
import { performance } from 'node:perf_hooks';

const TOLERANCE_MS = 1;

let anchorWall = 0;
let anchorMono = 0;

function reanchor(): void {
  const spinFrom = performance.now();
  const start = Date.now();
  let wall = start;
  let mono = spinFrom;
  // Wait for the next tick of Date.now(); give up after 5 ms (a frozen or mocked clock).
  while (wall === start && mono - spinFrom < 5) {
    mono = performance.now();
    wall = Date.now();
  }
  anchorWall = wall;
  anchorMono = mono;
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
