/**
 * The web console's metrics arithmetic: histogram deltas and interpolated
 * quantiles (as Prometheus' histogram_quantile), and the ring buffer over a
 * real daemon Metrics registry on a fake clock; the overview's problem
 * indicators.
 */
import { describe, expect, it } from 'vitest';
import { bucketDeltas, quantile } from '../../console/server/lag-stats.js';
import { MetricsHistory } from '../../console/server/metrics-history.js';
import { detectProblems, isLagRising } from '../../console/server/problems.js';
import { Metrics } from '../../daemon/metrics.js';

describe('lag stats', () => {
  const bounds = [1, 2, 5];

  it('turns two cumulative snapshots into per-bucket counts', () => {
    const older = { bounds, counts: [1, 2, 2, 3] };
    const newer = { bounds, counts: [3, 6, 8, 10] };
    expect(bucketDeltas(older, newer)).toEqual([2, 2, 2, 1]);
  });

  it('interpolates inside the bucket holding the rank; +Inf reports the largest bound; nothing observed is null', () => {
    expect(quantile(bounds, [0, 10, 0, 0], 0.5)).toBeCloseTo(1.5);
    expect(quantile(bounds, [10, 0, 0, 0], 0.99)).toBeCloseTo(0.99);
    expect(quantile(bounds, [0, 0, 0, 4], 0.5)).toBe(5);
    expect(quantile(bounds, [0, 0, 0, 0], 0.5)).toBeNull();
  });
});

describe('MetricsHistory', () => {
  it('derives fires/s, lag percentiles and a lag histogram from samples of the registry', async () => {
    const metrics = new Metrics();
    let now = 1_000_000;
    const history = new MetricsHistory({ registry: metrics.registry, capacity: 3, now: () => now });
    await history.sampleNow();
    for (let i = 0; i < 20; i++) {
      metrics.fired.inc();
      metrics.fireLag.observe(0.8);
    }
    metrics.workers.set(2);
    now += 1_000;
    await history.sampleNow();
    const s = history.series(5);
    expect(s.firesPerSec).toEqual([20]);
    expect(s.lagP50Ms[0]).toBeGreaterThan(0.5);
    expect(s.lagP50Ms[0]).toBeLessThanOrEqual(1);
    const h = history.histogram(5);
    expect(h.counts.reduce((a, b) => a + b, 0)).toBe(20);
    expect(h.counts[h.boundsMs.indexOf(1)]).toBe(20);
    expect(history.latest()?.gauges.workerStreams).toBe(2);
    // The ring keeps `capacity` samples, oldest overwritten, in time order.
    now += 1_000;
    await history.sampleNow();
    now += 1_000;
    await history.sampleNow();
    expect(history.samples().map((x) => x.atMs)).toEqual([1_001_000, 1_002_000, 1_003_000]);
  });
});

describe('overview problems', () => {
  const calm = { unownedShards: 0, maxOverdueMs: 0, deadLetters: { count: 0, capped: false }, clockSkewMs: 3, lagP99RecentMs: 1, lagP99BeforeMs: 1 };

  it('reports nothing when all is calm', () => {
    expect(detectProblems(calm)).toEqual([]);
  });

  it('names each problem: unowned shards, overdue runs, dead letters, clock skew', () => {
    const kinds = detectProblems({ ...calm, unownedShards: 2, maxOverdueMs: 4_000, deadLetters: { count: 1000, capped: true }, clockSkewMs: -250 });
    expect(kinds.map((p) => [p.kind, p.message])).toEqual([
      ['unowned_shards', '2 shards without an owner: their runs do not fire'],
      ['overdue', 'runs overdue by up to 4000 ms'],
      ['dead_letters', '1000+ dead letters'],
      ['clock_skew', 'clock skew with Postgres: -250 ms'],
    ]);
  });

  it('calls lag rising only above the floor and more than twice what it was', () => {
    expect(isLagRising(null, 5)).toBe(false);
    expect(isLagRising(20, 1)).toBe(false); // under the 25 ms floor
    expect(isLagRising(60, 40)).toBe(false); // high, but not rising
    expect(isLagRising(90, 40)).toBe(true);
    expect(isLagRising(30, 1)).toBe(true);
    expect(isLagRising(30, null)).toBe(true); // nothing fired before
  });
});
