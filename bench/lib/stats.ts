/**
 * Percentiles and summaries of latency samples (ms). Nearest-rank on a sorted
 * copy: p99 of 15,000 samples is the 14,850th smallest, a value that was
 * actually observed (no interpolation).
 */

export interface LagSummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0];
  if (p >= 100) return sorted[sorted.length - 1];
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function sortedCopy(values: readonly number[]): Float64Array {
  const a = Float64Array.from(values);
  a.sort();
  return a;
}

export function summarize(values: readonly number[]): LagSummary {
  const s = sortedCopy(values);
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    p999: percentile(s, 99.9),
    max: s.length ? s[s.length - 1] : Number.NaN,
    mean: s.length ? sum / s.length : Number.NaN,
  };
}

/** Rounds to `digits` decimals, keeping NaN as null for JSON. */
export function round(v: number, digits = 2): number | null {
  if (!Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
