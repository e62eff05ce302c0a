/**
 * Pure arithmetic over Prometheus histogram snapshots: the difference of two
 * cumulative snapshots, and a quantile from bucket counts, interpolated
 * linearly inside a bucket as Prometheus' histogram_quantile does.
 */

/** Cumulative bucket counts of a histogram at one instant; `counts[i]` counts observations ≤ `bounds[i]`, the last entry is +Inf. */
export interface HistogramSnapshot {
  /** Finite upper bounds, ascending (the +Inf bucket is implied). */
  bounds: readonly number[];
  /** bounds.length + 1 cumulative counts, the last one the total. */
  counts: readonly number[];
}

/** Per-bucket (not cumulative) counts observed between two snapshots of one histogram. */
export function bucketDeltas(older: HistogramSnapshot, newer: HistogramSnapshot): number[] {
  const out: number[] = [];
  let previous = 0;
  for (let i = 0; i < newer.counts.length; i++) {
    const cumulative = Math.max(0, newer.counts[i] - (older.counts[i] ?? 0));
    out.push(Math.max(0, cumulative - previous));
    previous = Math.max(previous, cumulative);
  }
  return out;
}

/** The q-quantile (0..1) of per-bucket counts; null when nothing was observed. Values in the +Inf bucket report the largest bound. */
export function quantile(bounds: readonly number[], perBucket: readonly number[], q: number): number | null {
  const total = perBucket.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < perBucket.length; i++) {
    const inBucket = perBucket[i];
    if (below + inBucket >= rank && inBucket > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1];
      const lower = i === 0 ? 0 : bounds[i - 1];
      return lower + (bounds[i] - lower) * ((rank - below) / inBucket);
    }
    below += inBucket;
  }
  return bounds[bounds.length - 1];
}
