/**
 * One fire-lag trial at one rate and one pattern, on infrastructure of its own.
 *
 * Phases, each bounded in time:
 *   setup    fresh database (migrated) + Redis prefix, one daemon child
 *            process, wait until it owns every shard, start the worker
 *   history  (--preload-jobs n) n jobs scheduled a year ahead on a queue
 *            nobody reads, then a CHECKPOINT, so that the trial writes into
 *            the tables and indexes of a database in service
 *   warm-up  (steady, upfront) 200 runs fired through the whole path (daemon,
 *            claim, stream, worker) on a side queue — steady: and a second
 *            at the trial's rate (STEADY_WARMUP_SECONDS; --warmup-seconds),
 *            for it measures a daemon and a worker in service — and 5
 *            far-future batches to estimate the ingest rate; none counts in
 *            the results. burst has none: the daemon and the worker meet the
 *            burst cold
 *   ingest   R × S runs on queue "bench", run i due at t0 + i/R s, scheduled
 *            with ScheduleBatch in due order —
 *            steady:  by a scheduler loop that, every 50 ms for the whole fire
 *                     phase, sends the runs coming due within --lead s (at
 *                     most --ingest-parallel calls in flight): ingest and
 *                     firing interleave, at the fire rate
 *            burst:   all of them just before t0, one call of --batch at a
 *                     time; t0 = now + R·S / --burst-ingest-rate + --lead
 *            upfront: all of them before t0, --ingest-parallel calls in
 *                     flight; t0 = now + estimated ingest time + --lead
 *   fire     from t0 until every run arrived (or last due + --grace):
 *            CPU, RSS and (with --profile) the daemon's metrics are taken
 *            around this phase only
 *   teardown worker, daemon, client, Redis keys, database (Resources)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DaemonProcess } from '../../ops/local/daemon-process.js';
import { type ScheduleInput, TimelaneClient } from '@timelane/client';
import type { BenchOptions, Pattern } from './args.js';
import { daemonEnv, freePort, killStrayDaemons, waitFor } from './bench-daemon.js';
import { benchRedisPrefix, createBenchDatabase } from './infra.js';
import { cpuBetween, cpuSnapshot, RssSampler, waitForQuietMachine, type CpuUse } from './proc.js';
import { gauge, histogramBetween, scrape, type BucketQuantiles, type Scrape } from './prom.js';
import { onExitKill, Resources } from './resources.js';
import { summarize, type LagSummary } from './stats.js';
import { startBenchWorker, type BenchWorker } from './workers.js';

const QUEUE = 'bench';
const WARMUP_QUEUE = 'bench-warmup';
/**
 * Steady measures a daemon and a worker in service: a second at the rate
 * first. Started cold into 10,000 runs/s, both run their first second's code
 * at two to three times its later cost (bench/README.md, seventeenth
 * session); the burst pattern measures that start.
 */
const STEADY_WARMUP_SECONDS = 1;
const PROBE_QUEUE = 'bench-probe';
const HISTORY_QUEUE = 'bench-history';
const YEAR_MS = 365 * 24 * 3600 * 1000;
const WARMUP_RUNS = 200;
const PROBE_BATCHES = 5;
/** Steady: how often the scheduler loop looks for runs coming due within --lead. */
const STEADY_TICK_MS = 50;

export interface TrialResult {
  pattern: Pattern;
  rate: number;
  seconds: number;
  scheduled: number;
  /** Distinct scheduled runs the worker received. */
  fired: number;
  lost: number;
  duplicates: number;
  /** Deliveries received before their due time. */
  early: number;
  /** The most any of them was early, ms (the worker's sub-ms wall clock may read up to 1 ms off Date.now()). */
  earlyMaxMs: number;
  lag: LagSummary;
  /** Share of runs received more than 10 ms / 50 ms after due. */
  over10ms: number;
  over50ms: number;
  firesPerS: number;
  /** Runs scheduled per second of time with at least one ScheduleBatch of the trial in flight. */
  ingestPerS: number;
  /** ScheduleBatch call latency (ms) of the trial's ingest. */
  scheduleCallMs: LagSummary;
  /** Runs per ScheduleBatch call, mean. */
  runsPerCall: number;
  /** The warm-up probe's rate (far-future batches, --ingest-parallel in flight); NaN without a warm-up (burst). */
  probeIngestPerS: number;
  /** Runs fired end to end before the trial (0: burst, no warm-up). */
  warmupRuns: number;
  /** Jobs in the database before the trial (--preload-jobs). */
  preloadJobs: number;
  /**
   * burst, upfront: first due minus the end of ingest (negative: ingest
   * overran it). steady: the least time any run had left before its due time
   * when its ScheduleBatch was acknowledged.
   */
  ingestHeadroomMs: number;
  /** Runs whose ScheduleBatch was acknowledged at or after their due time (ingest too slow). */
  scheduledLate: number;
  daemonRssMb: number;
  daemonHwmMb: number;
  /** Per-run stages from the worker's side, ms. */
  breakdown: {
    /** fired_at − due: the daemon's release (0 for a run staged at the worker). */
    timer: LagSummary;
    /** arrival − due: when the message reached the worker (negative: staged, that long ahead). */
    arrival: LagSummary;
    /** handler − max(arrival, due): the worker's own part (a staged run's hold overshoot, or queueing). */
    workerQueue: LagSummary;
    /** Share of runs that reached the worker before their due time (staged). */
    stagedShare: number;
  };
  cpu: CpuUse;
  fireSeconds: number;
  workerMode: string;
  /** The child worker's V8 interrupt budget (tuneJitForLatency); 0 = V8's default. */
  workerJitBudget: number;
  /** Machine busy (% of one core) just before the trial, with nothing of ours running. */
  backgroundPct: number;
  workerErrors: number;
  daemonWarnings: string[];
  profile?: DaemonProfile;
  /** Per second of due time: runs, lag p50 and p99 (ms), for --profile. */
  timeline: { second: number; runs: number; p50: number; p99: number; arrivalP99: number }[];
  dbSettings: [string, string][];
  /**
   * pg_stat_database of the bench database over the fire phase: commits and
   * row writes per second; and the server's WAL written and checkpoints begun
   * meanwhile (server-wide: every database's writes count). A checkpoint
   * forced by WAL volume mid-trial makes the next write to every page log a
   * full-page image: a tail of its own, set by max_wal_size, not timelane.
   */
  pgActivity:
    | { commitsPerS: number; updatedPerS: number; insertedPerS: number; walBytesPerS: number; checkpoints: number; checkpointsByWal: number; maxWalSizeMb: number }
    | undefined;
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

/**
 * Time with at least one ScheduleBatch in flight, the runs they carried and
 * each call's latency: ingest_per_s = runs / busy time, whatever the pattern.
 */
class IngestMeter {
  private inFlight = 0;
  private busySince = 0;
  busyMs = 0;
  runs = 0;
  readonly callMs: number[] = [];

  async call<T>(runs: number, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    if (this.inFlight++ === 0) this.busySince = started;
    try {
      return await fn();
    } finally {
      const ended = performance.now();
      this.callMs.push(ended - started);
      this.runs += runs;
      if (--this.inFlight === 0) this.busyMs += ended - this.busySince;
    }
  }

  get perS(): number {
    return this.busyMs > 0 ? this.runs / (this.busyMs / 1000) : NaN;
  }
}

type OnBatch = (ids: string[], dues: number[], ackedAt: number) => void;

async function scheduleBatch(client: TimelaneClient, batch: ScheduleInput[], meter: IngestMeter | undefined, onBatch?: OnBatch): Promise<void> {
  const results = meter ? await meter.call(batch.length, () => client.scheduleBatch(batch)) : await client.scheduleBatch(batch);
  onBatch?.(
    results.map((r) => r.run.id),
    results.map((r) => r.run.dueAtMs),
    Date.now(),
  );
}

/** Everything at once, in due order, `parallel` calls in flight. Returns the wall time it took. */
async function ingest(client: TimelaneClient, inputs: ScheduleInput[], batchSize: number, parallel: number, meter?: IngestMeter, onBatch?: OnBatch): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < inputs.length) {
      const batch = inputs.slice(next, next + batchSize);
      next += batch.length;
      await scheduleBatch(client, batch, meter, onBatch);
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return performance.now() - started;
}

/**
 * The steady pattern's scheduler: every STEADY_TICK_MS it sends, in due
 * order, the runs due within `leadMs` from now,
 * `batchSize` at most per call and `parallel` calls at most in flight, until
 * every input was scheduled. Runs thus arrive at the fire rate, `leadMs`
 * before they come due, while earlier ones fire.
 */
function steadyIngest(client: TimelaneClient, inputs: ScheduleInput[], leadMs: number, batchSize: number, parallel: number, meter: IngestMeter, onBatch: OnBatch): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = 0;
    let inFlight = 0;
    let failed = false;
    const due = (k: number): number => inputs[k].at as number;
    const finish = (err?: unknown): void => {
      clearInterval(timer);
      if (err !== undefined) {
        failed = true;
        reject(err instanceof Error ? err : new Error(String(err)));
      } else resolve();
    };
    const pump = (): void => {
      if (failed) return;
      const horizon = Date.now() + leadMs;
      while (inFlight < parallel && next < inputs.length && due(next) <= horizon) {
        let end = next;
        while (end < inputs.length && end - next < batchSize && due(end) <= horizon) end++;
        const batch = inputs.slice(next, end);
        next = end;
        inFlight++;
        scheduleBatch(client, batch, meter, onBatch).then(
          () => {
            inFlight--;
            // No pump here: batches go out on the tick, a tick's worth each, not a few runs per return.
            if (next >= inputs.length && inFlight === 0) finish();
          },
          (err: unknown) => finish(err),
        );
      }
    };
    const timer = setInterval(pump, STEADY_TICK_MS);
    pump();
    if (inputs.length === 0) finish();
  });
}

interface PgStatDatabase {
  xact_commit: number;
  tup_updated: number;
  tup_inserted: number;
  wal_bytes: number;
  checkpoints_timed: number;
  checkpoints_req: number;
  max_wal_size_mb: number;
}

/** Runs `fn` on a connection of its own to `url`, closed after. */
async function withConnection<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function pgStatDatabase(url: string): Promise<PgStatDatabase> {
  return withConnection(url, async (c) => {
    // PostgreSQL 17 moved the checkpoint counters from pg_stat_bgwriter to pg_stat_checkpointer.
    const { rows: v } = await c.query<{ n: number }>(`SELECT current_setting('server_version_num')::int AS n`);
    const checkpointStats =
      v[0].n >= 170000 ? '(SELECT num_timed AS checkpoints_timed, num_requested AS checkpoints_req FROM pg_stat_checkpointer) b' : 'pg_stat_bgwriter b';
    const { rows } = await c.query<PgStatDatabase>(
      `SELECT d.xact_commit::float8 AS xact_commit, d.tup_updated::float8 AS tup_updated, d.tup_inserted::float8 AS tup_inserted,
         (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8 AS wal_bytes,
         b.checkpoints_timed::float8 AS checkpoints_timed, b.checkpoints_req::float8 AS checkpoints_req,
         (SELECT setting::float8 FROM pg_settings WHERE name = 'max_wal_size') AS max_wal_size_mb
       FROM pg_stat_database d, ${checkpointStats} WHERE d.datname = current_database()`,
    );
    return rows[0];
  });
}

function runStatusCounts(url: string, schema: string): Promise<Record<string, number>> {
  return withConnection(url, async (c) => {
    const { rows } = await c.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM ${schema}.runs WHERE queue = $1 GROUP BY status ORDER BY status`, [QUEUE]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  });
}

/** CHECKPOINT needs the admin role (superuser or pg_checkpoint), not the bench database's. */
function checkpoint(adminUrl: string): Promise<void> {
  return withConnection(adminUrl, async (c) => {
    await c.query('CHECKPOINT');
  });
}

export async function runTrial(opts: BenchOptions, rate: number, pattern: Pattern): Promise<TrialResult> {
  const res = new Resources();
  try {
    return await trial(opts, rate, pattern, res);
  } finally {
    log(opts, 'stopping worker, daemon, Redis keys and database');
    await res.closeAll();
  }
}

async function trial(opts: BenchOptions, rate: number, pattern: Pattern, res: Resources): Promise<TrialResult> {
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
  log(opts, `${pattern}: rate ${rate}/s × ${opts.seconds} s = ${total} runs; database ${db.name}, redis prefix ${prefix}`);
  const daemon = await DaemonProcess.start({
    databaseUrl: db.url,
    redisUrl: opts.redisUrl,
    args: ['--redis-prefix', prefix, '--metrics-address', metricsAddress, '--member-id', `bench-${process.pid}`, ...opts.daemonArgs],
    echo: opts.echoDaemon,
    env: daemonEnv(opts.daemonCpuProf, false, opts.daemonNodeOptions),
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

  const worker: BenchWorker = await startBenchWorker({ mode: opts.worker, address: daemon.address, queues: [QUEUE, WARMUP_QUEUE], concurrency: opts.concurrency, jitBudget: opts.workerJitBudget }, res);

  // --- history: the trial writes into a database in service ----------------
  if (opts.preloadJobs > 0) {
    const far = Date.now() + YEAR_MS;
    const history = Array.from({ length: opts.preloadJobs }, (_, i) => ({ queue: HISTORY_QUEUE, at: far + i }));
    const ms = await ingest(client, history, opts.batchSize, opts.ingestParallel);
    // After a checkpoint, the first change to each page writes the whole page to the WAL: the regime a busy
    // database is in most of the time (checkpoints every few minutes, or sooner under heavy writes).
    await checkpoint(opts.adminUrl);
    log(opts, `history: ${opts.preloadJobs} jobs scheduled a year ahead in ${Math.round(ms)} ms (${Math.round(opts.preloadJobs / (ms / 1000))}/s), then a CHECKPOINT`);
  }

  // --- warm-up (not for burst: the daemon meets the burst cold) ------------
  let probeRate = NaN;
  let warmupRuns = 0;
  if (pattern !== 'burst') {
    // 200 runs over a second prove the path; --warmup-seconds S fires rate × S more at the rate, spread over S.
    const warmupSeconds = opts.warmupSeconds ?? (pattern === 'steady' ? STEADY_WARMUP_SECONDS : 0);
    const warmRuns = (warmupRuns = WARMUP_RUNS + Math.round(rate * warmupSeconds));
    const spreadMs = 1000 + warmupSeconds * 1000;
    const warmAt = Date.now() + 300 + (warmRuns - WARMUP_RUNS) / 20; // ~20 runs/ms of ingest before the first is due
    await ingest(
      client,
      Array.from({ length: warmRuns }, (_, i) => ({ queue: WARMUP_QUEUE, at: warmAt + Math.floor((i * spreadMs) / warmRuns) })),
      opts.batchSize,
      1,
    );
    await waitFor('the warm-up runs to reach the worker', 30_000 + spreadMs, async () => {
      await worker.flush();
      return worker.receipts.length >= warmRuns;
    });
    const far = Date.now() + 3_600_000;
    const probe = Array.from({ length: PROBE_BATCHES * opts.batchSize }, (_, i) => ({ queue: PROBE_QUEUE, at: far + i }));
    const probeMs = await ingest(client, probe, opts.batchSize, opts.ingestParallel);
    probeRate = probe.length / (probeMs / 1000);
    log(opts, `warm-up done; probe ingest ${Math.round(probeRate)} runs/s`);
  }

  // --- ingest --------------------------------------------------------------
  const leadMs = opts.leadSeconds * 1000;
  const estimateMs = pattern === 'upfront' ? (total / (probeRate * 0.7)) * 1000 : pattern === 'burst' ? (total / opts.burstIngestRate) * 1000 : 0;
  const t0 = Math.ceil(Date.now() + estimateMs + leadMs);
  const inputs: ScheduleInput[] = Array.from({ length: total }, (_, i) => ({ queue: QUEUE, at: t0 + Math.floor((i * 1000) / rate) }));
  const lastDue = inputs.length ? (inputs[inputs.length - 1].at as number) : t0;
  const scheduled = new Map<number, number>();
  let ackedLate = 0;
  let leastLeft = Infinity;
  const meter = new IngestMeter();
  const onBatch: OnBatch = (ids, dues, ackedAt) => {
    for (let k = 0; k < ids.length; k++) {
      scheduled.set(Number(ids[k]), dues[k]);
      if (ackedAt >= dues[k]) ackedLate++;
      leastLeft = Math.min(leastLeft, dues[k] - ackedAt);
    }
  };
  let steady: Promise<void> | undefined;
  let ingestHeadroomMs: number;
  if (pattern === 'steady') {
    log(opts, `scheduling ${total} runs ${opts.leadSeconds} s ahead of due while they fire, first due in ${Math.round(t0 - Date.now())} ms`);
    steady = steadyIngest(client, inputs, leadMs, opts.batchSize, opts.ingestParallel, meter, onBatch);
    steady.catch(() => undefined); // awaited after the fire phase
    ingestHeadroomMs = NaN; // known at the end
  } else {
    log(opts, `ingesting ${total} runs (${pattern === 'burst' ? 'one call at a time' : `${opts.ingestParallel} calls in flight`}), first due in ${Math.round(t0 - Date.now())} ms`);
    await ingest(client, inputs, opts.batchSize, pattern === 'burst' ? 1 : opts.ingestParallel, meter, onBatch);
    ingestHeadroomMs = t0 - Date.now();
    log(opts, `ingested at ${Math.round(meter.perS)} runs/s; ${Math.round(ingestHeadroomMs)} ms before the first due time${ackedLate ? `; ${ackedLate} runs acknowledged after their due time` : ''}`);
  }

  // --- fire --------------------------------------------------------------
  const metricsUrl = metricsAddress ? `http://${metricsAddress}/metrics` : '';
  const untilFire = t0 - Date.now();
  if (untilFire > 300) await sleep(untilFire - 300);
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
  if (steady) {
    // The scheduler sent its last batch `lead` before the last due time; a call still out is bounded by the client's timeout.
    await steady;
    ingestHeadroomMs = leastLeft;
    log(opts, `steady ingest: ${Math.round(meter.perS)} runs per busy second, ScheduleBatch p99 ${summarize(meter.callMs).p99.toFixed(1)} ms, least lead ${Math.round(leastLeft)} ms${ackedLate ? `; ${ackedLate} runs acknowledged after their due time` : ''}`);
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
          walBytesPerS: (pgB.wal_bytes - pgA.wal_bytes) / fireSeconds,
          checkpoints: pgB.checkpoints_timed + pgB.checkpoints_req - pgA.checkpoints_timed - pgA.checkpoints_req,
          checkpointsByWal: pgB.checkpoints_req - pgA.checkpoints_req,
          maxWalSizeMb: pgB.max_wal_size_mb,
        }
      : undefined;
  const dbStatus = await runStatusCounts(db.url, db.schema).catch((err: unknown) => ({ [`error: ${String(err)}`]: 0 }));

  // --- results -----------------------------------------------------------
  const r = worker.receipts;
  const first = new Set<number>();
  const lags: number[] = [];
  const timer: number[] = [];
  const arrival: number[] = [];
  const queueing: number[] = [];
  let staged = 0;
  let duplicates = 0;
  let early = 0;
  let earlyMaxMs = 0;
  let lastReceipt = -Infinity;
  for (let i = 0; i < r.length; i++) {
    const id = r.runId[i];
    const due = scheduled.get(id);
    if (due === undefined) continue; // warm-up or foreign
    if (r.handledAtMs[i] < due) {
      early++;
      earlyMaxMs = Math.max(earlyMaxMs, due - r.handledAtMs[i]);
    }
    if (first.has(id)) {
      duplicates++;
      continue;
    }
    first.add(id);
    lags.push(r.handledAtMs[i] - due);
    timer.push(r.firedAtMs[i] - due);
    arrival.push(r.arrivedAtMs[i] - due);
    if (r.arrivedAtMs[i] < due) staged++;
    queueing.push(r.handledAtMs[i] - Math.max(r.arrivedAtMs[i], due));
    if (r.handledAtMs[i] > lastReceipt) lastReceipt = r.handledAtMs[i];
  }
  const lag = summarize(lags);
  // Per second of due time: the lag, and when the runs reached the worker (arrival − due), to tell the daemon's seconds from the worker's.
  const perSecond = new Map<number, { lag: number[]; arrival: number[] }>();
  for (let i = 0; i < r.length; i++) {
    const due = scheduled.get(r.runId[i]);
    if (due === undefined) continue;
    const sec = Math.floor((due - t0) / 1000);
    const list = perSecond.get(sec) ?? { lag: [], arrival: [] };
    list.lag.push(r.handledAtMs[i] - due);
    list.arrival.push(r.arrivedAtMs[i] - due);
    perSecond.set(sec, list);
  }
  const timeline = [...perSecond.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([second, l]) => {
      const s = summarize(l.lag);
      return { second, runs: s.count, p50: s.p50, p99: s.p99, arrivalP99: summarize(l.arrival).p99 };
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
    pattern,
    rate,
    seconds: opts.seconds,
    scheduled: total,
    fired: first.size,
    lost: total - first.size,
    duplicates,
    early,
    earlyMaxMs,
    lag,
    over10ms: share(10),
    over50ms: share(50),
    firesPerS: first.size && lastReceipt > t0 ? first.size / ((lastReceipt - t0) / 1000) : 0,
    ingestPerS: meter.perS,
    scheduleCallMs: summarize(meter.callMs),
    runsPerCall: meter.callMs.length ? meter.runs / meter.callMs.length : NaN,
    probeIngestPerS: probeRate,
    warmupRuns,
    preloadJobs: opts.preloadJobs,
    ingestHeadroomMs,
    scheduledLate: ackedLate,
    daemonRssMb: rss.peakMb,
    daemonHwmMb: rss.lastHwmMb,
    breakdown: { timer: summarize(timer), arrival: summarize(arrival), workerQueue: summarize(queueing), stagedShare: first.size > 0 ? staged / first.size : 0 },
    cpu: cpuBetween(cpuA, cpuB, { daemonPid: daemon.pid, workerPid: worker.pid, benchPid: process.pid, database: db.name }),
    fireSeconds,
    workerMode: opts.worker,
    workerJitBudget: opts.worker === 'child' ? opts.workerJitBudget : 0,
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
