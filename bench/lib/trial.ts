/**
 * One fire-lag trial at one rate, on infrastructure of its own.
 *
 * Phases, each bounded in time:
 *   setup    fresh database (migrated) + Redis prefix, one daemon child
 *            process, wait until it owns every shard, start the worker
 *   warm-up  200 runs fired through the whole path (daemon, claim, stream,
 *            worker) on a side queue, and 5 far-future batches to estimate
 *            the ingest rate; neither counts in the results
 *   ingest   R × S runs on queue "bench", due at t0 + i/R s, scheduled with
 *            ScheduleBatch in due order before t0 (t0 = now + estimated
 *            ingest time + --lead)
 *   fire     from t0 until every run arrived (or last due + --grace):
 *            CPU, RSS and (with --profile) the daemon's metrics are taken
 *            around this phase only
 *   teardown worker, daemon, client, Redis keys, database (Resources)
 */
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { DaemonProcess } from '../../ops/local/daemon-process.js';
import { TimelaneClient } from '../../clients/client.js';
import type { ScheduleInput } from '../../clients/types.js';
import type { BenchOptions } from './args.js';
import { benchRedisPrefix, createBenchDatabase } from './infra.js';
import { cpuBetween, cpuSnapshot, RssSampler, waitForQuietMachine, type CpuUse } from './proc.js';
import { gauge, histogramBetween, scrape, type BucketQuantiles, type Scrape } from './prom.js';
import { onExitKill, Resources } from './resources.js';
import { summarize, type LagSummary } from './stats.js';
import { startBenchWorker, type BenchWorker } from './workers.js';

const QUEUE = 'bench';
const WARMUP_QUEUE = 'bench-warmup';
const PROBE_QUEUE = 'bench-probe';
const WARMUP_RUNS = 200;
const PROBE_BATCHES = 5;

export interface TrialResult {
  rate: number;
  seconds: number;
  scheduled: number;
  /** Distinct scheduled runs the worker received. */
  fired: number;
  lost: number;
  duplicates: number;
  /** Deliveries received before their due time. */
  early: number;
  lag: LagSummary;
  /** Share of runs received more than 10 ms / 50 ms after due. */
  over10ms: number;
  over50ms: number;
  firesPerS: number;
  ingestPerS: number;
  /** First due minus the end of ingest (negative: ingest overran it). */
  ingestHeadroomMs: number;
  /** Runs whose ScheduleBatch was acknowledged at or after their due time (ingest too slow). */
  scheduledLate: number;
  daemonRssMb: number;
  daemonHwmMb: number;
  /** Per-run stages from the worker's side, ms. */
  breakdown: { timer: LagSummary; firedToWorker: LagSummary; workerQueue: LagSummary };
  cpu: CpuUse;
  fireSeconds: number;
  workerMode: string;
  /** Machine busy (% of one core) just before the trial, with nothing of ours running. */
  backgroundPct: number;
  workerErrors: number;
  daemonWarnings: string[];
  profile?: DaemonProfile;
  /** Per second of due time: runs, lag p50 and p99 (ms), for --profile. */
  timeline: { second: number; runs: number; p50: number; p99: number }[];
  dbSettings: [string, string][];
  /** pg_stat_database of the bench database over the fire phase: commits and row writes per second. */
  pgActivity: { commitsPerS: number; updatedPerS: number; insertedPerS: number } | undefined;
  /** Status of the bench's runs in Postgres at the end: tells "late" (still scheduled/fired) from lost. */
  dbStatus: Record<string, number>;
}

export interface DaemonProfile {
  timerLag?: BucketQuantiles;
  fireLag?: BucketQuantiles;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  readyBacklogAtEnd: number;
  claimMisses: number;
}

function log(_opts: BenchOptions, msg: string): void {
  // Progress goes to stderr so stdout carries only the report (and the JSON lines).
  process.stderr.write(`bench: ${msg}\n`);
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** SIGKILLs daemons we spawned for `database` that DaemonProcess could not hand back (start timed out). */
function killStrayDaemons(database: string): void {
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd.some((a) => a.endsWith(`${path.sep}cli.js`)) && cmd.includes('daemon') && cmd.some((a) => a.includes(`/${database}`))) process.kill(Number(d), 'SIGKILL');
    } catch {
      /* gone, or not ours */
    }
  }
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function ingest(client: TimelaneClient, inputs: ScheduleInput[], batchSize: number, parallel: number, onBatch?: (ids: string[], dues: number[], ackedAt: number) => void): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < inputs.length) {
      const batch = inputs.slice(next, next + batchSize);
      next += batch.length;
      const results = await client.scheduleBatch(batch);
      onBatch?.(
        results.map((r) => r.run.id),
        results.map((r) => r.run.dueAtMs),
        Date.now(),
      );
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return performance.now() - started;
}

interface PgStatDatabase {
  xact_commit: number;
  tup_updated: number;
  tup_inserted: number;
}

async function pgStatDatabase(url: string): Promise<PgStatDatabase> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<PgStatDatabase>(
      'SELECT xact_commit::float8 AS xact_commit, tup_updated::float8 AS tup_updated, tup_inserted::float8 AS tup_inserted FROM pg_stat_database WHERE datname = current_database()',
    );
    return rows[0];
  } finally {
    await c.end();
  }
}

async function runStatusCounts(url: string, schema: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${schema}.runs WHERE queue = $1 GROUP BY status ORDER BY status`, [QUEUE]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    await c.end();
  }
}

export async function runTrial(opts: BenchOptions, rate: number): Promise<TrialResult> {
  const res = new Resources();
  try {
    return await trial(opts, rate, res);
  } finally {
    log(opts, 'stopping worker, daemon, Redis keys and database');
    await res.closeAll();
  }
}

async function trial(opts: BenchOptions, rate: number, res: Resources): Promise<TrialResult> {
  const total = Math.round(rate * opts.seconds);
  let backgroundPct = NaN;
  if (opts.quietWaitSeconds > 0) {
    let told = false;
    backgroundPct = await waitForQuietMachine(opts.quietBelowPct, opts.quietWaitSeconds * 1000, (busy) => {
      if (!told) log(opts, `machine busy (${Math.round(busy)}% of a core, not ours): waiting up to ${opts.quietWaitSeconds} s for it to settle`);
      told = true;
    });
  }

  // --- setup -------------------------------------------------------------
  const db = await createBenchDatabase(opts.adminUrl, opts.shardCount, opts.dbSettings, res);
  const prefix = benchRedisPrefix(opts.redisUrl, res);
  const metricsAddress = opts.profile ? `127.0.0.1:${await freePort()}` : '';
  res.defer('kill stray daemons', () => killStrayDaemons(db.name));
  log(opts, `rate ${rate}/s × ${opts.seconds} s = ${total} runs; database ${db.name}, redis prefix ${prefix}`);
  const daemon = await DaemonProcess.start({
    databaseUrl: db.url,
    redisUrl: opts.redisUrl,
    args: ['--redis-prefix', prefix, '--metrics-address', metricsAddress, '--member-id', `bench-${process.pid}`, ...opts.daemonArgs],
    echo: opts.echoDaemon,
    env: opts.daemonCpuProf
      ? {
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), 'cpu-prof-preload.js')).href}`.trim(),
          TIMELANE_BENCH_CPU_PROF_DIR: path.resolve(opts.daemonCpuProf),
        }
      : undefined,
    startTimeoutMs: 30_000,
  });
  const unregisterKill = onExitKill(() => daemon.child.kill('SIGKILL'));
  res.defer('stop daemon', async () => {
    await daemon.stop(10_000);
    unregisterKill();
  });
  const rss = new RssSampler(daemon.pid, 250).start();
  res.defer('stop rss sampler', () => rss.stop());

  const client = new TimelaneClient(daemon.address, { timeoutMs: 60_000 });
  res.defer('close client', () => client.close());
  await waitFor('the daemon to own every shard', 30_000, async () => (await client.listShards()).every((s) => s.ownedHere), 100);

  const worker: BenchWorker = await startBenchWorker({ mode: opts.worker, address: daemon.address, queues: [QUEUE, WARMUP_QUEUE], concurrency: opts.concurrency }, res);

  // --- warm-up -----------------------------------------------------------
  const warmAt = Date.now() + 300;
  const warmIds = new Set<number>();
  await ingest(
    client,
    Array.from({ length: WARMUP_RUNS }, (_, i) => ({ queue: WARMUP_QUEUE, at: warmAt + Math.floor((i * 1000) / WARMUP_RUNS) })),
    opts.batchSize,
    1,
    (ids) => ids.forEach((id) => warmIds.add(Number(id))),
  );
  await waitFor('the warm-up runs to reach the worker', 30_000, async () => {
    await worker.flush();
    return worker.receipts.length >= WARMUP_RUNS;
  });
  const far = Date.now() + 3_600_000;
  const probe = Array.from({ length: PROBE_BATCHES * opts.batchSize }, (_, i) => ({ queue: PROBE_QUEUE, at: far + i }));
  const probeMs = await ingest(client, probe, opts.batchSize, opts.ingestParallel);
  const probeRate = probe.length / (probeMs / 1000);
  log(opts, `warm-up done; probe ingest ${Math.round(probeRate)} runs/s`);

  // --- ingest ------------------------------------------------------------
  const estimateMs = (total / (probeRate * 0.7)) * 1000;
  const t0 = Math.ceil(Date.now() + estimateMs + opts.leadSeconds * 1000);
  const inputs: ScheduleInput[] = Array.from({ length: total }, (_, i) => ({ queue: QUEUE, at: t0 + Math.floor((i * 1000) / rate) }));
  const lastDue = inputs.length ? (inputs[inputs.length - 1].at as number) : t0;
  const scheduled = new Map<number, number>();
  let ackedLate = 0;
  log(opts, `ingesting ${total} runs, first due in ${Math.round(t0 - Date.now())} ms`);
  const ingestMs = await ingest(client, inputs, opts.batchSize, opts.ingestParallel, (ids, dues, ackedAt) => {
    for (let k = 0; k < ids.length; k++) {
      scheduled.set(Number(ids[k]), dues[k]);
      if (ackedAt >= dues[k]) ackedLate++;
    }
  });
  const ingestHeadroomMs = t0 - Date.now();
  const ingestPerS = total / (ingestMs / 1000);
  log(opts, `ingested at ${Math.round(ingestPerS)} runs/s; ${Math.round(ingestHeadroomMs)} ms before the first due time${ackedLate ? `; ${ackedLate} runs acknowledged after their due time` : ''}`);

  // --- fire --------------------------------------------------------------
  const metricsUrl = metricsAddress ? `http://${metricsAddress}/metrics` : '';
  if (ingestHeadroomMs > 300) await sleep(ingestHeadroomMs - 300);
  const before: Scrape | undefined = metricsUrl ? await scrape(metricsUrl).catch(() => undefined) : undefined;
  const logsBefore = daemon.logs.length;
  const pgA = await pgStatDatabase(db.url).catch(() => undefined);
  const cpuA = cpuSnapshot();
  const seen = new Set<number>();
  let cursor = 0;
  const absorb = (): void => {
    const r = worker.receipts;
    for (; cursor < r.length; cursor++) if (scheduled.has(r.runId[cursor])) seen.add(r.runId[cursor]);
  };
  const endBy = lastDue + opts.graceSeconds * 1000;
  log(opts, `firing for ${opts.seconds} s…`);
  while (Date.now() < endBy) {
    absorb();
    if (seen.size >= total && Date.now() > lastDue + 500) break;
    await sleep(100);
  }
  const cpuB = cpuSnapshot();
  const after: Scrape | undefined = metricsUrl ? await scrape(metricsUrl).catch(() => undefined) : undefined;
  await worker.flush();
  absorb();
  rss.stop();
  const fireSeconds = (cpuB.at - cpuA.at) / 1000;
  // Backends publish their statistics about once a second: wait that out.
  await sleep(1_100);
  const pgB = await pgStatDatabase(db.url).catch(() => undefined);
  const pgActivity =
    pgA && pgB
      ? {
          commitsPerS: (pgB.xact_commit - pgA.xact_commit) / fireSeconds,
          updatedPerS: (pgB.tup_updated - pgA.tup_updated) / fireSeconds,
          insertedPerS: (pgB.tup_inserted - pgA.tup_inserted) / fireSeconds,
        }
      : undefined;
  const dbStatus = await runStatusCounts(db.url, db.schema).catch((err: unknown) => ({ [`error: ${String(err)}`]: 0 }));

  // --- results -----------------------------------------------------------
  const r = worker.receipts;
  const first = new Set<number>();
  const lags: number[] = [];
  const timer: number[] = [];
  const transit: number[] = [];
  const queueing: number[] = [];
  let duplicates = 0;
  let early = 0;
  let lastReceipt = -Infinity;
  for (let i = 0; i < r.length; i++) {
    const id = r.runId[i];
    const due = scheduled.get(id);
    if (due === undefined) continue; // warm-up or foreign
    if (r.handledAtMs[i] < due) early++;
    if (first.has(id)) {
      duplicates++;
      continue;
    }
    first.add(id);
    lags.push(r.handledAtMs[i] - due);
    timer.push(r.firedAtMs[i] - due);
    transit.push(r.arrivedAtMs[i] - r.firedAtMs[i]);
    queueing.push(r.handledAtMs[i] - r.arrivedAtMs[i]);
    if (r.handledAtMs[i] > lastReceipt) lastReceipt = r.handledAtMs[i];
  }
  const lag = summarize(lags);
  const perSecond = new Map<number, number[]>();
  for (let i = 0; i < r.length; i++) {
    const due = scheduled.get(r.runId[i]);
    if (due === undefined) continue;
    const sec = Math.floor((due - t0) / 1000);
    const list = perSecond.get(sec) ?? [];
    list.push(r.handledAtMs[i] - due);
    perSecond.set(sec, list);
  }
  const timeline = [...perSecond.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([second, l]) => {
      const s = summarize(l);
      return { second, runs: s.count, p50: s.p50, p99: s.p99 };
    });
  const share = (limit: number): number => (lags.length ? lags.filter((l) => l > limit).length / lags.length : 0);
  const warnings = daemon.logs
    .slice(logsBefore)
    .filter((l) => (l.level ?? 0) >= 40)
    .map((l) => String(l.msg ?? JSON.stringify(l)));

  let profile: DaemonProfile | undefined;
  if (before && after) {
    profile = {
      timerLag: histogramBetween(before, after, 'timelane_timer_lag_ms'),
      fireLag: histogramBetween(before, after, 'timelane_fire_lag_ms'),
      eventLoopP99Ms: gauge(after, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      eventLoopMaxMs: gauge(after, 'nodejs_eventloop_lag_max_seconds') * 1000,
      readyBacklogAtEnd: gauge(after, 'timelane_ready_backlog'),
      claimMisses: gauge(after, 'timelane_claim_misses_total') - (before.get('timelane_claim_misses_total') ?? 0),
    };
  }

  return {
    rate,
    seconds: opts.seconds,
    scheduled: total,
    fired: first.size,
    lost: total - first.size,
    duplicates,
    early,
    lag,
    over10ms: share(10),
    over50ms: share(50),
    firesPerS: first.size && lastReceipt > t0 ? first.size / ((lastReceipt - t0) / 1000) : 0,
    ingestPerS,
    ingestHeadroomMs,
    scheduledLate: ackedLate,
    daemonRssMb: rss.peakMb,
    daemonHwmMb: rss.lastHwmMb,
    breakdown: { timer: summarize(timer), firedToWorker: summarize(transit), workerQueue: summarize(queueing) },
    cpu: cpuBetween(cpuA, cpuB, { daemonPid: daemon.pid, workerPid: worker.pid, benchPid: process.pid, database: db.name }),
    fireSeconds,
    workerMode: opts.worker,
    backgroundPct,
    workerErrors: worker.errors.length,
    daemonWarnings: warnings,
    profile,
    timeline,
    dbSettings: opts.dbSettings,
    dbStatus,
    pgActivity,
  };
}
