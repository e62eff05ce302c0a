/**
 * The peers bench's output: one table of the systems side by side, one of
 * CPU over the fire phase, each system's tuning; and the JSON object keyed
 * by system (the last stdout line with --json).
 */
import type { MachineInfo } from '../machine.js';
import { round } from '../stats.js';
import type { FireCpu, SystemResult } from './scenario.js';

const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '—');
const ms = (v: number): string => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2)) : '—');
const pct = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)}%` : '—');

function table(head: string[], rows: string[][], leftColumns = 1): string {
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]): string => `| ${cells.map((s, c) => (c < leftColumns ? s.padEnd(widths[c]) : s.padStart(widths[c]))).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (c < leftColumns ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}

export function resultsTable(results: SystemResult[]): string {
  const head = ['system', 'received', 'scheduled', 'lost', 'dup', 'early', 'lag p50 ms', 'p99 ms', 'max ms', 'throughput/s', 'ingest/s', 'lead ms'];
  const rows = results.map((r) => [
    r.error ? `${r.system} (failed)` : r.system,
    int(r.received),
    int(r.scheduled),
    int(r.lost),
    int(r.duplicates),
    int(r.early),
    ms(r.lag.p50),
    ms(r.lag.p99),
    ms(r.lag.max),
    int(r.throughputPerS),
    int(r.ingestPerS),
    int(r.leadMs),
  ]);
  return table(head, rows);
}

/** Machine − everything attributed: the neighbours on a shared machine (and the kernel). */
function othersPct(c: FireCpu): number {
  return Math.max(0, c.machine - c.consumer - c.daemon - c.postgresOurs - c.postgresOther - c.redis);
}

export function cpuTable(results: SystemResult[]): string {
  const head = ['system', 'busy before', 'consumer (bench)', 'daemon', 'pg (its db)', 'pg (other)', 'redis', 'other processes', 'machine'];
  const rows = results.map((r) => [
    r.system,
    pct(r.backgroundPct),
    pct(r.cpu?.consumer ?? Number.NaN),
    pct(r.cpu?.daemon ?? Number.NaN),
    pct(r.cpu?.postgresOurs ?? Number.NaN),
    pct(r.cpu?.postgresOther ?? Number.NaN),
    pct(r.cpu?.redis ?? Number.NaN),
    pct(r.cpu ? othersPct(r.cpu) : Number.NaN),
    pct(r.cpu?.machine ?? Number.NaN),
  ]);
  return table(head, rows);
}

export function notes(results: SystemResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    out.push(`${r.system}: ${r.tuning}`);
    if (r.error) out.push(`  FAILED: ${r.error}`);
    if (r.scheduled < r.planned) out.push(`  only ${r.scheduled} of ${r.planned} jobs were acknowledged`);
    if (r.scheduledLate) out.push(`  ${r.scheduledLate} jobs were acknowledged at or after their due time (ingest slower than --assume-ingest)`);
    if (r.early) out.push(`  ${r.early} receipts before their due time, the earliest by ${r.earlyMaxMs.toFixed(2)} ms`);
    if (r.unknown) out.push(`  ${r.unknown} receipts of jobs not of this run`);
  }
  return out.join('\n');
}

function systemJson(r: SystemResult): Record<string, unknown> {
  const cpu = r.cpu;
  return {
    received: r.received,
    scheduled: r.scheduled,
    lost: r.lost,
    duplicates: r.duplicates,
    early: r.early,
    early_max_ms: round(r.earlyMaxMs),
    lag_ms: { p50: round(r.lag.p50), p90: round(r.lag.p90), p99: round(r.lag.p99), p999: round(r.lag.p999), max: round(r.lag.max) },
    throughput_per_s: round(r.throughputPerS, 1),
    ingest_per_s: round(r.ingestPerS, 0),
    lead_ms: round(r.leadMs, 0),
    scheduled_late: r.scheduledLate,
    planned: r.planned,
    cpu_pct: cpu
      ? { consumer: round(cpu.consumer, 1), daemon: round(cpu.daemon, 1), postgres_own_db: round(cpu.postgresOurs, 1), postgres_other: round(cpu.postgresOther, 1), redis: round(cpu.redis, 1), other_processes: round(othersPct(cpu), 1), machine: round(cpu.machine, 1) }
      : null,
    busy_before_pct: round(r.backgroundPct, 1),
    tuning: r.tuning,
    ...(r.error ? { error: r.error } : {}),
  };
}

/** One object keyed by system name. */
export function resultsJson(results: SystemResult[]): string {
  return JSON.stringify(Object.fromEntries(results.map((r) => [r.system, systemJson(r)])));
}

/** The line printed before it: the machine and the scenario. */
export function contextJson(machine: MachineInfo, scenario: Record<string, unknown>): string {
  return JSON.stringify({ machine, scenario });
}
