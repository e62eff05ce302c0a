/**
 * How results are printed: a block per trial, a table for a suite, and the
 * one-line JSON object per rate (--json) whose keys are the bench's contract.
 */
import type { MachineInfo } from './machine.js';
import { round, type LagSummary } from './stats.js';
import type { TrialResult } from './trial.js';
import type { MemReading, WindowResult } from './window-trial.js';

const f = (v: number, d = 2): string => (Number.isFinite(v) ? v.toFixed(d) : '-');
const n = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const q = (s: LagSummary, d = 2): string => `p50 ${f(s.p50, d)}  p90 ${f(s.p90, d)}  p99 ${f(s.p99, d)}  p99.9 ${f(s.p999, d)}  max ${f(s.max, d)}`;

/** Machine CPU not used by anything of the trial (other builds and tests on a shared box). */
function otherPct(r: TrialResult): number {
  const c = r.cpu;
  return c.machine - c.daemon - (Number.isFinite(c.worker) ? c.worker : 0) - c.bench - c.postgresOurs - c.postgresOther - c.redis;
}

/** How much time ingest left before due: per pattern (see TrialResult.ingestHeadroomMs). */
function ingestLead(r: TrialResult): string {
  if (r.pattern === 'steady') return `the least time left before due at acknowledgement ${n(r.ingestHeadroomMs)} ms`;
  return r.ingestHeadroomMs >= 0 ? `done ${n(r.ingestHeadroomMs)} ms before the first due time` : `ran ${f(-r.ingestHeadroomMs / 1000, 1)} s into the fire phase`;
}

export function trialText(r: TrialResult): string {
  const lines = [
    `${r.pattern}: rate ${n(r.rate)}/s for ${r.seconds} s (worker: ${r.workerMode}${r.workerJitBudget ? `, JIT budget ${r.workerJitBudget}` : ''}${r.dbSettings.length ? `; database settings ${r.dbSettings.map(([k, v]) => `${k}=${v}`).join(', ')}` : ''})`,
    `  scheduled ${n(r.scheduled)}  fired ${n(r.fired)}  lost ${n(r.lost)}  duplicates ${n(r.duplicates)}  early ${n(r.early)}${r.early ? ` (by at most ${f(r.earlyMaxMs, 3)} ms)` : ''}   (in Postgres at the end: ${Object.entries(r.dbStatus).map(([k, v]) => `${k} ${n(v)}`).join(', ') || '-'})`,
    `  lag ms (worker receipt - due_at): ${q(r.lag)}  (>10 ms: ${f(r.over10ms * 100, 3)}%, >50 ms: ${f(r.over50ms * 100, 3)}%)`,
    `  fires/s ${f(r.firesPerS, 1)}   daemon peak RSS ${f(r.daemonRssMb, 1)} MB (VmHWM ${f(r.daemonHwmMb, 1)} MB)`,
    `  ingest ${n(r.ingestPerS)} runs per second of ScheduleBatch busy time (${f(r.runsPerCall, 0)} runs per call, call p50 ${f(r.scheduleCallMs.p50, 1)} / p99 ${f(r.scheduleCallMs.p99, 1)} ms; ${ingestLead(r)}${r.scheduledLate ? `, ${n(r.scheduledLate)} acked after due` : ''})${Number.isFinite(r.probeIngestPerS) ? `; warm-up ${n(r.warmupRuns)} runs fired, probe ${n(r.probeIngestPerS)} runs/s` : '; no warm-up'}${r.preloadJobs ? `; ${n(r.preloadJobs)} jobs in the database before` : ''}`,
    `  stages ms, from the worker's side (${f(r.breakdown.stagedShare * 100, 1)}% of runs staged: they reached the worker before due):`,
    `    to fired_at   (fired_at - due: the daemon's release, 0 if staged; whole ms) ${q(r.breakdown.timer, 1)}`,
    `    to worker     (arrival - due: < 0 staged ahead, > 0 late)              ${q(r.breakdown.arrival)}`,
    `    in worker     (handler - max(arrival, due): hold overshoot, queueing)  ${q(r.breakdown.workerQueue, 3)}`,
    `  CPU over the ${f(r.fireSeconds, 1)} s fire phase, % of one core: daemon ${f(r.cpu.daemon, 0)}, worker ${Number.isFinite(r.cpu.worker) ? f(r.cpu.worker, 0) : '(in bench)'}, bench ${f(r.cpu.bench, 0)}, postgres ${f(r.cpu.postgresOurs, 0)} (+${f(r.cpu.postgresOther, 0)} other pg), redis ${f(r.cpu.redis, 0)}, machine ${f(r.cpu.machine, 0)} (other processes ${f(otherPct(r), 0)}; before the trial ${f(r.backgroundPct, 0)})`,
    `  waiting for a CPU (run queue), % of the fire phase: daemon's event loop ${f(r.cpu.waits.daemon, 1)}, worker's ${f(r.cpu.waits.worker, 1)}, postgres backends ${f(r.cpu.waits.postgresOurs, 1)} (summed)`,
  ];
  if (r.pgActivity) {
    const a = r.pgActivity;
    const perRun = r.fired > 0 && r.fireSeconds > 0 ? (a.commitsPerS * r.fireSeconds) / r.fired : NaN;
    lines.push(`  Postgres (bench database) over the fire phase: ${n(a.commitsPerS)} commits/s (${f(perRun, 2)} per run received), ${n(a.updatedPerS)} rows updated/s`);
    const walPerRun = r.fired > 0 && r.fireSeconds > 0 ? (a.walBytesPerS * r.fireSeconds) / r.fired : NaN;
    lines.push(
      `  Postgres server over the fire phase: WAL ${f(a.walBytesPerS / 1e6, 1)} MB/s (${n(walPerRun)} B per run received, ingest included); checkpoints begun ${n(a.checkpoints)}` +
        (a.checkpointsByWal > 0 ? ` (${n(a.checkpointsByWal)} requested, most likely by WAL volume: max_wal_size ${n(a.maxWalSizeMb)} MB)` : ''),
    );
  }
  if (r.profile) {
    const p = r.profile;
    const h = (name: string, b: typeof p.timerLag): string =>
      b ? `    ${name}: n ${n(b.count)}, p50 ≤ ${b.p50}, p90 ≤ ${b.p90}, p99 ≤ ${b.p99}, p99.9 ≤ ${b.p999} ms; ≤1 ms ${f(b.under1ms * 100, 1)}%, ≤10 ms ${f(b.under10ms * 100, 1)}%` : `    ${name}: -`;
    lines.push(
      '  daemon metrics over the fire phase (histogram bucket bounds):',
      h('timelane_timer_lag_ms (timer fired - due)', p.timerLag),
      h('timelane_fire_lag_ms  (claim returned - due)', p.fireLag),
      `    event loop delay p99 ${f(p.eventLoopP99Ms)} ms, max ${f(p.eventLoopMaxMs)} ms; ready backlog at end ${n(p.readyBacklogAtEnd)}; claim misses ${n(p.claimMisses)}`,
    );
  }
  if (r.profile && r.timeline.length) {
    lines.push('  lag by second of due time (runs received, p50 / p99 ms, [p99 of arrival − due at the worker]):');
    for (let i = 0; i < r.timeline.length; i += 5) {
      lines.push(
        '    ' +
          r.timeline
            .slice(i, i + 5)
            .map((t) => `${String(t.second).padStart(3)}s ${String(t.runs).padStart(5)} ${f(t.p50, 1).padStart(7)}/${f(t.p99, 1).padEnd(6)} [${f(t.arrivalP99, 0)}]`.padEnd(34))
            .join(' '),
      );
    }
  }
  if (r.workerErrors) lines.push(`  worker stream errors: ${r.workerErrors}`);
  if (r.daemonWarnings.length) lines.push(`  daemon warnings: ${r.daemonWarnings.length} (first: ${r.daemonWarnings.slice(0, 3).join(' | ')})`);
  return lines.join('\n');
}

export function suiteTable(results: TrialResult[]): string {
  const head = ['pattern', 'rate/s', 'scheduled', 'fired', 'lost', 'dup', 'early', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'fires/s', 'ingest/s', 'RSS MB'];
  const rows = results.map((r) => [
    r.pattern,
    n(r.rate),
    n(r.scheduled),
    n(r.fired),
    n(r.lost),
    n(r.duplicates),
    n(r.early),
    f(r.lag.p50),
    f(r.lag.p90),
    f(r.lag.p99),
    f(r.lag.p999),
    f(r.lag.max),
    f(r.firesPerS, 0),
    n(r.ingestPerS),
    f(r.daemonRssMb, 0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]): string => '| ' + cells.map((c, i) => c.padStart(widths[i])).join(' | ') + ' |';
  return [line(head), '|' + widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|', ...rows.map(line)].join('\n');
}

export function trialJson(r: TrialResult, machine: MachineInfo): string {
  return JSON.stringify({
    pattern: r.pattern,
    rate: r.rate,
    seconds: r.seconds,
    scheduled: r.scheduled,
    fired: r.fired,
    lost: r.lost,
    duplicates: r.duplicates,
    early: r.early,
    lag_ms: { p50: round(r.lag.p50, 3), p90: round(r.lag.p90, 3), p99: round(r.lag.p99, 3), p999: round(r.lag.p999, 3), max: round(r.lag.max, 3) },
    fires_per_s: round(r.firesPerS, 1),
    daemon_rss_mb: round(r.daemonRssMb, 1),
    ingest_per_s: round(r.ingestPerS, 0),
    schedule_batch_ms: { p50: round(r.scheduleCallMs.p50, 2), p99: round(r.scheduleCallMs.p99, 2) },
    ingest_headroom_ms: round(r.ingestHeadroomMs, 0),
    scheduled_late: r.scheduledLate,
    warmup: Number.isFinite(r.probeIngestPerS),
    warmup_runs: r.warmupRuns,
    preload_jobs: r.preloadJobs,
    wal_bytes_per_run: r.pgActivity && r.fired > 0 ? round((r.pgActivity.walBytesPerS * r.fireSeconds) / r.fired, 0) : null,
    checkpoints_in_trial: r.pgActivity ? r.pgActivity.checkpoints : null,
    cpu_wait_pct: { daemon: round(r.cpu.waits.daemon, 1), worker: round(r.cpu.waits.worker, 1), postgres: round(r.cpu.waits.postgresOurs, 1) },
    worker: r.workerMode,
    worker_jit_budget: r.workerJitBudget,
    machine,
  });
}

/** Best, median and worst of the complete rebuilds (runs/s). */
export function rebuildSpread(w: WindowResult): { best: number; median: number; worst: number } | undefined {
  const rates = w.rebuilds
    .filter((r) => r.complete)
    .map((r) => r.runsPerS)
    .sort((a, b) => b - a);
  if (rates.length === 0) return undefined;
  return { best: rates[0], median: rates[Math.floor(rates.length / 2)], worst: rates[rates.length - 1] };
}

export function windowText(w: WindowResult): string {
  const mb = (m: MemReading): string => `RSS ${f(m.rssMb, 1)} MB, V8 heap used ${f(m.heapUsedMb, 1)} MB + external ${f(m.externalMb, 1)} MB`;
  const lines = [
    `window: ${n(w.runs)} runs in one daemon's window (W ${n(w.windowMs / 1000)} s, ${w.shardCount} shards; machine busy ${f(w.backgroundPct, 0)}% of a core before)`,
    `  empty window (after GC):  ${mb(w.baseline)}`,
    `  full window (before GC):  ${mb(w.fullNoGc)}`,
    `  full window (after GC):   ${mb(w.full)}`,
    `  bytes per in-window run:  ${f(w.bytesPerRun, 0)} B of RSS (target ≤ 500), ${f(w.heapBytesPerRun, 0)} B of V8 heap + external`,
  ];
  w.rebuilds.forEach((r, i) => {
    lines.push(
      `  rebuild ${i + 1}${r.complete ? '' : ' (INCOMPLETE)'}: ${n(r.runs)} runs in ${n(r.firstAcquiredToLoadedMs)} ms from the first shard acquired = ${n(r.runsPerS)} runs/s (spawn → full ${n(r.spawnToLoadedMs)} ms; ${r.scans.length} first-load scans: ${r.scans.map((s) => `${s.shards} shards/${n(s.runs)} runs/${n(s.ms)} ms`).join(', ')})`,
      `    CPU % of one core: daemon ${f(r.cpu.daemon, 0)}, postgres ${f(r.cpu.postgresOurs, 0)} (+${f(r.cpu.postgresOther, 0)} other), machine ${f(r.cpu.machine, 0)} (busy ${f(r.backgroundPct, 0)} before); rebuilt daemon after GC: ${mb(r.after)} (${f(((r.after.rssMb - w.baseline.rssMb) * 2 ** 20) / Math.max(1, r.runs), 0)} B/run over the first daemon's empty baseline)`,
    );
  });
  const s = rebuildSpread(w);
  if (s) lines.push(`  rebuild runs/s: best ${n(s.best)}, median ${n(s.median)}, worst ${n(s.worst)} (target ≥ 200,000)`);
  if (w.skipped) lines.push(`  ${w.skipped}`);
  return lines.join('\n');
}

export function windowJson(w: WindowResult, machine: MachineInfo): string {
  const s = rebuildSpread(w);
  return JSON.stringify({
    pattern: 'window',
    runs: w.runs,
    window_ms: w.windowMs,
    bytes_per_window_run: round(w.bytesPerRun, 0),
    heap_bytes_per_window_run: round(w.heapBytesPerRun, 0),
    daemon_rss_mb: { empty: round(w.baseline.rssMb, 1), full: round(w.full.rssMb, 1), full_before_gc: round(w.fullNoGc.rssMb, 1) },
    rebuild_runs_per_s: s ? round(s.best, 0) : null,
    rebuild_runs_per_s_all: w.rebuilds.map((r) => (r.complete ? round(r.runsPerS, 0) : null)),
    rebuild_ms: w.rebuilds.map((r) => r.firstAcquiredToLoadedMs),
    rebuild_cpu_pct: w.rebuilds.map((r) => ({ daemon: round(r.cpu.daemon, 0), postgres: round(r.cpu.postgresOurs, 0), machine: round(r.cpu.machine, 0) })),
    machine,
  });
}
