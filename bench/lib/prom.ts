/**
 * Reads the daemon's Prometheus endpoint (only with --profile): histogram
 * buckets of timelane_timer_lag_ms / timelane_fire_lag_ms, differenced
 * between two scrapes so only the measured phase counts, and the event-loop
 * delay gauges (prom-client resets those at every scrape).
 */

export type Scrape = Map<string, number>;

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const out: Scrape = new Map();
  for (const line of (await res.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const sp = line.lastIndexOf(' ');
    out.set(line.slice(0, sp), Number(line.slice(sp + 1)));
  }
  return out;
}

export interface BucketQuantiles {
  count: number;
  /** Upper bound (ms) of the bucket holding each quantile: "at most". */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  /** Share of observations at or under 1 ms / 10 ms. */
  under1ms: number;
  under10ms: number;
}

/** Quantiles of `name`'s buckets observed between `before` and `after`. */
export function histogramBetween(before: Scrape, after: Scrape, name: string): BucketQuantiles | undefined {
  const buckets: { le: number; n: number }[] = [];
  for (const [key, v] of after) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"`).exec(key);
    if (!m) continue;
    buckets.push({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), n: v - (before.get(key) ?? 0) });
  }
  if (buckets.length === 0) return undefined;
  buckets.sort((a, b) => a.le - b.le);
  const total = buckets[buckets.length - 1].n;
  const q = (p: number): number => buckets.find((b) => b.n >= (p / 100) * total)?.le ?? NaN;
  const share = (le: number): number => (total ? (buckets.find((b) => b.le === le)?.n ?? NaN) / total : NaN);
  return { count: total, p50: q(50), p90: q(90), p99: q(99), p999: q(99.9), under1ms: share(1), under10ms: share(10) };
}

export function gauge(s: Scrape, name: string): number {
  return s.get(name) ?? NaN;
}
