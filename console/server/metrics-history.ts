/**
 * MetricsHistory: a short ring buffer of this daemon's own metrics, sampled
 * from its prom-client registry once a second, so the overview can draw
 * fires/s and lag over the last minutes without a Prometheus server.
 *
 * Owns: the ring of samples and the sampling timer.
 * States: idle (constructed) → sampling (start) → stopped (stop).
 * Invariants: samples are in time order, at most `capacity` of them (the
 *   oldest is overwritten); counters and histogram counts in them never go
 *   down (one registry for the daemon's life).
 *
 * Why sampled in-process rather than computed from runs: the fire lag the
 * daemon measures (timelane_fire_lag_ms) is exact and free to read, where
 * runs would need a scan of the runs table on every page load. The price:
 * these series describe the member that serves the console, not the whole
 * cluster (the page says so); cluster-wide rates belong to Prometheus.
 */
import type { Registry } from 'prom-client';
import { bucketDeltas, quantile, type HistogramSnapshot } from './lag-stats.js';

export const FIRE_LAG_METRIC = 'timelane_fire_lag_ms';
export const FIRED_METRIC = 'timelane_runs_fired_total';
const GAUGES = {
  workerStreams: 'timelane_worker_streams',
  runsInWindow: 'timelane_runs_in_window',
  readyBacklog: 'timelane_ready_backlog',
  clockSkewMs: 'timelane_clock_skew_ms',
  ownedShards: 'timelane_owned_shards',
} as const;
export type GaugeName = keyof typeof GAUGES;

export interface MetricsSample {
  atMs: number;
  fired: number;
  lag: HistogramSnapshot;
  gauges: Record<GaugeName, number>;
}

export interface MetricsSeries {
  /** Sample times, epoch ms. */
  tMs: number[];
  firesPerSec: (number | null)[];
  /** Over the trailing `smoothSamples` samples; null when nothing fired then. */
  lagP50Ms: (number | null)[];
  lagP99Ms: (number | null)[];
}

export interface LagHistogram {
  /** Finite upper bounds in ms; the last bucket (`counts` has one more entry) is "above the last bound". */
  boundsMs: number[];
  counts: number[];
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
}

export interface MetricsHistoryOptions {
  registry: Registry;
  /** Sampling period, ms. @defaultValue 1000 */
  intervalMs?: number;
  /** Samples kept. @defaultValue 600 (10 minutes at 1 s) */
  capacity?: number;
  now?: () => number;
}

/** Lag percentiles of the series are computed over this many trailing samples (5 s at 1 s), so one quiet second is not a gap. */
const SMOOTH_SAMPLES = 5;

interface MetricValue {
  value: number;
  labels: Record<string, string | number | undefined>;
  metricName?: string;
}

export class MetricsHistory {
  private readonly ring: MetricsSample[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(private readonly opts: MetricsHistoryOptions) {
    this.intervalMs = opts.intervalMs ?? 1000;
    this.capacity = opts.capacity ?? 600;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    void this.sampleNow();
    this.timer = setInterval(() => void this.sampleNow(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Samples in time order. */
  samples(): MetricsSample[] {
    return this.ring.length < this.capacity ? [...this.ring] : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  /** The newest sample, or null before the first. */
  latest(): MetricsSample | null {
    const all = this.samples();
    return all.length ? all[all.length - 1] : null;
  }

  /** Series over the last `minutes`. */
  series(minutes: number): MetricsSeries {
    const all = this.within(minutes);
    const out: MetricsSeries = { tMs: [], firesPerSec: [], lagP50Ms: [], lagP99Ms: [] };
    for (let i = 1; i < all.length; i++) {
      const a = all[i - 1];
      const b = all[i];
      const dt = (b.atMs - a.atMs) / 1000;
      const from = all[Math.max(0, i - SMOOTH_SAMPLES)];
      const deltas = bucketDeltas(from.lag, b.lag);
      out.tMs.push(b.atMs);
      out.firesPerSec.push(dt > 0 ? Math.max(0, b.fired - a.fired) / dt : null);
      out.lagP50Ms.push(quantile(b.lag.bounds, deltas, 0.5));
      out.lagP99Ms.push(quantile(b.lag.bounds, deltas, 0.99));
    }
    return out;
  }

  /** The fire-lag histogram of everything fired in the last `minutes`. */
  histogram(minutes: number): LagHistogram {
    const now = this.now();
    return this.histogramBetween(now - minutes * 60_000, now);
  }

  /** The fire-lag histogram of what fired between two instants (epoch ms), as far as the samples reach. */
  histogramBetween(fromMs: number, toMs: number): LagHistogram {
    const all = this.samples().filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
    const last = all[all.length - 1];
    if (!last) return { boundsMs: [], counts: [], p50Ms: null, p90Ms: null, p99Ms: null };
    // One sample has no predecessor: count from zero, which only happens while
    // the ring is filling (it then includes fires from before the console started).
    const first = all.length > 1 ? all[0] : { ...last, lag: { bounds: last.lag.bounds, counts: last.lag.counts.map(() => 0) } };
    const counts = bucketDeltas(first.lag, last.lag);
    const bounds = [...last.lag.bounds];
    return {
      boundsMs: bounds,
      counts,
      p50Ms: quantile(bounds, counts, 0.5),
      p90Ms: quantile(bounds, counts, 0.9),
      p99Ms: quantile(bounds, counts, 0.99),
    };
  }

  private within(minutes: number): MetricsSample[] {
    const since = this.now() - minutes * 60_000;
    return this.samples().filter((s) => s.atMs >= since);
  }

  /** Takes one sample now (the timer calls it every interval). */
  async sampleNow(): Promise<void> {
    try {
      const s = await this.read();
      if (this.ring.length < this.capacity) this.ring.push(s);
      else this.ring[this.next] = s;
      this.next = (this.next + 1) % this.capacity;
    } catch {
      // A metric not registered (a registry without the daemon's metrics): keep what we have.
    }
  }

  private async read(): Promise<MetricsSample> {
    const values = async (name: string): Promise<MetricValue[]> => {
      const metric = this.opts.registry.getSingleMetric(name);
      if (!metric) throw new Error(`metric ${name} is not registered`);
      return (await metric.get()).values as MetricValue[];
    };
    const lagValues = await values(FIRE_LAG_METRIC);
    const buckets = lagValues
      .filter((v) => v.metricName === `${FIRE_LAG_METRIC}_bucket`)
      .map((v) => ({ le: v.labels.le === '+Inf' ? Infinity : Number(v.labels.le), count: v.value }))
      .sort((a, b) => a.le - b.le);
    const gauges = {} as Record<GaugeName, number>;
    for (const [key, name] of Object.entries(GAUGES) as [GaugeName, string][]) gauges[key] = (await values(name))[0]?.value ?? 0;
    return {
      atMs: this.now(),
      fired: (await values(FIRED_METRIC))[0]?.value ?? 0,
      lag: { bounds: buckets.filter((b) => Number.isFinite(b.le)).map((b) => b.le), counts: buckets.map((b) => b.count) },
      gauges,
    };
  }
}
