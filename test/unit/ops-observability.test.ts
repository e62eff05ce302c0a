/**
 * The Grafana dashboard and the Prometheus alert rules in ops/ use only
 * metrics the daemon exports (a renamed metric would leave a silent panel or
 * an alert that never fires), and every alert is complete.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Metrics } from '../../daemon/metrics.js';

const root = new URL('../../', import.meta.url);
const alerts = parse(readFileSync(new URL('ops/prometheus/alerts.yaml', root), 'utf8')) as {
  groups: { name: string; rules: { alert: string; expr: string; for: string; labels: { severity: string }; annotations: { summary: string; description: string } }[] }[];
};
const dashboard = JSON.parse(readFileSync(new URL('ops/grafana/timelane-dashboard.json', root), 'utf8')) as {
  panels: { title: string; targets: { expr: string }[] }[];
};

// A cluster daemon's metrics (with Redis: timelane_redis_up too), the most any daemon exports.
const clusterMetrics = new Metrics();
clusterMetrics.watchRedis();
const exported = new Set(clusterMetrics.registry.getMetricsAsArray().map((m) => m.name));

/** Metric names an expression uses (timelane_* only), a histogram's _bucket/_sum/_count series folded to the histogram. */
const metricsIn = (expr: string): string[] =>
  [...expr.matchAll(/\btimelane_[a-z_]+/g)].map((m) => {
    const folded = m[0].replace(/_(bucket|sum|count)$/, '');
    return exported.has(m[0]) ? m[0] : folded;
  });

describe('ops/prometheus/alerts.yaml', () => {
  const rules = alerts.groups.flatMap((g) => g.rules);
  it('has the alerts operators need', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual(
      ['TimelaneClockSkew', 'TimelaneDeadLettersRising', 'TimelaneFireLagHigh', 'TimelaneOccurrencesMissed', 'TimelanePostgresDown', 'TimelaneRedisDown', 'TimelaneShardsLost', 'TimelaneShardsUnowned'].sort(),
    );
  });
  it.each(rules.map((r) => [r.alert, r] as const))('%s: uses exported metrics only, and has for, severity and a summary', (_name, r) => {
    const used = metricsIn(r.expr);
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((m) => !exported.has(m))).toEqual([]);
    expect(r.for).toMatch(/^\d+[smh]$/);
    expect(['warning', 'critical']).toContain(r.labels.severity);
    expect(r.annotations.summary.length).toBeGreaterThan(10);
    expect(r.annotations.description.length).toBeGreaterThan(10);
  });
});

describe('ops/grafana/timelane-dashboard.json', () => {
  it('every panel queries exported metrics only, and together they cover every timelane metric', () => {
    const used = new Set<string>();
    for (const p of dashboard.panels) {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        const names = metricsIn(t.expr);
        expect(names.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        expect(names.filter((m) => !exported.has(m)), `${p.title}: ${t.expr}`).toEqual([]);
        names.forEach((n) => used.add(n));
      }
    }
    expect([...exported].filter((m) => m.startsWith('timelane_') && !used.has(m))).toEqual([]);
  });
});
