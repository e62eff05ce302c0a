/**
 * `npm run bench -- --memory`: what one daemon's window costs in memory, and
 * how fast a fresh daemon rebuilds it after a kill -9.
 *
 * Phases, each bounded in time:
 *   setup     fresh database, one daemon with a window W of --memory-window
 *             (300 s), --max-in-window 2N, /metrics on, and a GC hook
 *             (gc-preload.ts: SIGUSR2 = full GC); wait until it owns every shard
 *   baseline  full GC, then the daemon's RSS (/proc) and V8 heap used (/metrics)
 *   fill      N (--window-runs, 1,000,000) runs inserted straight into Postgres
 *             with generate_series (set-up, not measured) in chunks of 100,000,
 *             each due within a 1 s span starting W + 10 s after its insert
 *             begins: just past the loader's edge, so the daemon's ordinary
 *             window scans load them; wait until timelane_runs_in_window = N
 *   full      full GC, RSS and heap again: bytes per in-window run = ΔRSS / N
 *   rebuild   ×--rebuilds (3): kill -9 the daemon, start a new one (a fresh
 *             Redis prefix, so no lease is waited out: this measures the
 *             rebuild, bench:failover the takeover) and time its first
 *             `shard acquired` → its first-load scans ('window loaded' log
 *             lines) adding up to N
 *   teardown  daemons, Redis keys, database (Resources), always
 * Nothing fires: every run stays due more than a minute ahead throughout;
 * rebuilds that could not finish before that are skipped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DaemonProcess, type DaemonLogLine } from '../../ops/local/daemon-process.js';
import { TimelaneClient } from '@timelane/client';
import type { BenchOptions } from './args.js';
import { daemonEnv, freePort, killStrayDaemons, waitFor } from './bench-daemon.js';
import { benchRedisPrefix, createBenchDatabase, type BenchDatabase } from './infra.js';
import { cpuBetween, cpuSnapshot, machineBusyPct, readRss, type CpuUse } from './proc.js';
import { gauge, scrape } from './prom.js';
import { onExitKill, Resources } from './resources.js';

const QUEUE = 'bench-window';
const CHUNK = 100_000;
/** How far past the loader's edge a chunk's runs are due when its insert begins. */
const EDGE_MARGIN_MS = 10_000;
/** A rebuild starts only if the runs stay this far from due for its expected length. */
const DUE_MARGIN_MS = 60_000;

export interface MemReading {
  rssMb: number;
  heapUsedMb: number;
  /** Memory V8 does not manage itself: ArrayBuffers (the run heap's typed arrays), Buffers. */
  externalMb: number;
}

export interface RebuildResult {
  /** Runs loaded by the first-load scans. */
  runs: number;
  /** runs / (end of the first-load scan that completed them − first `shard acquired`). */
  runsPerS: number;
  firstAcquiredToLoadedMs: number;
  /** Process spawn → window full (Node start, connections, leases, rebuild). */
  spawnToLoadedMs: number;
  /** First-load scans as logged by the loader: shards, runs, ms. */
  scans: { shards: number; runs: number; ms: number }[];
  /** CPU, % of one core, spawn → window full. */
  cpu: CpuUse;
  /** Machine busy just before, with nothing of ours running (% of one core). */
  backgroundPct: number;
  /** The rebuilt daemon after a full GC. */
  after: MemReading;
  complete: boolean;
}

export interface WindowResult {
  runs: number;
  windowMs: number;
  shardCount: number;
  /** Set-up speed of the generate_series inserts (not a timelane figure). */
  sqlInsertPerS: number;
  baseline: MemReading;
  /** Window full, before the forced GC. */
  fullNoGc: MemReading;
  full: MemReading;
  bytesPerRun: number;
  /** Δ(V8 heap used + external) / N. */
  heapBytesPerRun: number;
  rebuilds: RebuildResult[];
  skipped: string | undefined;
  backgroundPct: number;
}

function log(msg: string): void {
  process.stderr.write(`bench: ${msg}\n`);
}

const wallMs = (l: DaemonLogLine): number => (typeof l.time === 'string' ? Date.parse(l.time) : typeof l.time === 'number' ? l.time : NaN);

interface Started {
  daemon: DaemonProcess;
  metricsUrl: string;
  spawnedAt: number;
  stop(): Promise<void>;
}

async function startDaemon(opts: BenchOptions, db: BenchDatabase, res: Resources, windowMs: number, maxInWindow: number, label: string): Promise<Started> {
  const prefix = benchRedisPrefix(opts.redisUrl, res);
  const metricsAddress = `127.0.0.1:${await freePort()}`;
  const spawnedAt = Date.now();
  const daemon = await DaemonProcess.start({
    databaseUrl: db.url,
    redisUrl: opts.redisUrl,
    args: [
      '--redis-prefix', prefix,
      '--metrics-address', metricsAddress,
      '--member-id', `bench-${label}-${process.pid}`,
      '--window-ms', String(windowMs),
      '--max-in-window', String(maxInWindow),
      ...opts.daemonArgs,
    ],
    echo: opts.echoDaemon,
    env: daemonEnv(opts.daemonCpuProf, true, opts.daemonNodeOptions),
    startTimeoutMs: 30_000,
  });
  const unregisterKill = onExitKill(() => daemon.child.kill('SIGKILL'));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await daemon.stop(10_000);
    unregisterKill();
  };
  res.defer(`stop daemon ${label}`, stop);
  return { daemon, metricsUrl: `http://${metricsAddress}/metrics`, spawnedAt, stop };
}

/** Full GC in the daemon (gc-preload.ts), then its RSS and V8 heap used. */
async function readMemory(d: Started, collect: boolean): Promise<MemReading> {
  if (collect) {
    d.daemon.signal('SIGUSR2');
    // The GC runs on the daemon's event loop; the scrape below is answered after it.
    await sleep(500);
  }
  const s = await scrape(d.metricsUrl);
  const rss = readRss(d.daemon.pid);
  return { rssMb: rss?.rssMb ?? NaN, heapUsedMb: gauge(s, 'nodejs_heap_size_used_bytes') / 2 ** 20, externalMb: gauge(s, 'nodejs_external_memory_bytes') / 2 ** 20 };
}

async function runsInWindow(d: Started): Promise<number> {
  return gauge(await scrape(d.metricsUrl).catch(() => new Map<string, number>()), 'timelane_runs_in_window');
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** One job per shard (the loader never reads jobs; runs need one to reference). */
async function insertJobs(c: pg.Client, schema: string, shards: number): Promise<void> {
  await c.query(
    `INSERT INTO ${schema}.jobs (id, namespace, queue, shard, payload, priority, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms, status)
     SELECT md5('${QUEUE}-' || s)::uuid, 'default', '${QUEUE}', s, '\\x'::bytea, 0, 'at_least_once', 1, 1000, 60000, 30000, 'active'
     FROM generate_series(0, $1::int - 1) s`,
    [shards],
  );
}

/** Runs [from, to) of the fill, spread over shards, due evenly within [dueBase, dueBase + 1 s). */
async function insertChunk(c: pg.Client, schema: string, shards: number, from: number, to: number, dueBase: number): Promise<void> {
  await c.query(
    `INSERT INTO ${schema}.runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key)
     SELECT j.id, j.shard, j.queue, 0, 1, 'scheduled', to_timestamp(($1::int8 + floor((g - $2::int8) * 1000.0 / ($3::int8 - $2::int8))) / 1000.0), j.id::text || ':' || g
     FROM generate_series($2::int8, $3::int8 - 1) g
     JOIN ${schema}.jobs j ON j.shard = (g % $4::int)::int AND j.queue = '${QUEUE}'`,
    [dueBase, from, to, shards],
  );
}

export async function runWindowTrial(opts: BenchOptions): Promise<WindowResult> {
  const res = new Resources();
  try {
    return await trial(opts, res);
  } finally {
    log('stopping daemons, Redis keys and database');
    await res.closeAll();
  }
}

async function trial(opts: BenchOptions, res: Resources): Promise<WindowResult> {
  const N = opts.windowRuns;
  const W = opts.memoryWindowSeconds * 1000;
  const maxInWindow = Math.max(2 * N, 1_000_000);
  const backgroundPct = await machineBusyPct(1_000);
  const db = await createBenchDatabase(opts.adminUrl, opts.shardCount, opts.dbSettings, res);
  res.defer('kill stray daemons', () => killStrayDaemons(db.name));
  log(`window: ${N.toLocaleString('en-US')} runs, W ${W / 1000} s, ${opts.shardCount} shards; database ${db.name}`);

  // --- setup and baseline ------------------------------------------------
  let d = await startDaemon(opts, db, res, W, maxInWindow, 'a');
  const client = new TimelaneClient(d.daemon.address, { timeoutMs: 30_000 });
  try {
    await waitFor('the daemon to own every shard', 30_000, async () => (await client.listShards()).every((s) => s.ownedHere), 100);
  } finally {
    client.close();
  }
  await sleep(2_000); // first loads, repair after acquisition, JIT: let it all settle before the baseline
  const baseline = await readMemory(d, true);
  log(`baseline: RSS ${baseline.rssMb.toFixed(1)} MB, heap used ${baseline.heapUsedMb.toFixed(1)} MB`);

  // --- fill ----------------------------------------------------------------
  const fillStarted = Date.now();
  let earliestDue = Infinity;
  let insertMs = 0;
  await withClient(db.url, async (c) => {
    await insertJobs(c, db.schema, opts.shardCount);
    for (let from = 0; from < N; from += CHUNK) {
      const to = Math.min(N, from + CHUNK);
      const t = Date.now();
      const dueBase = t + W + EDGE_MARGIN_MS;
      earliestDue = Math.min(earliestDue, dueBase);
      await insertChunk(c, db.schema, opts.shardCount, from, to, dueBase);
      insertMs += Date.now() - t;
      if (Date.now() - t > EDGE_MARGIN_MS) log(`a chunk took ${Date.now() - t} ms to insert: its earliest runs may wait for the repair scan`);
    }
  });
  const sqlInsertPerS = N / (insertMs / 1000);
  log(`inserted ${N.toLocaleString('en-US')} runs at ${Math.round(sqlInsertPerS)} rows/s; waiting for the window to hold them`);
  const first = d;
  let lastTold = 0;
  await waitFor('the window to hold every run', 120_000 + N / 10, async () => {
    const held = await runsInWindow(first);
    if (Date.now() - lastTold > 5_000) {
      lastTold = Date.now();
      log(`window holds ${held.toLocaleString('en-US')} runs`);
    }
    return held >= N;
  }, 250);
  log(`window full ${((Date.now() - fillStarted) / 1000).toFixed(1)} s after the fill began`);
  await sleep(2_000);
  const fullNoGc = await readMemory(d, false);
  const full = await readMemory(d, true);
  const bytesPerRun = ((full.rssMb - baseline.rssMb) * 2 ** 20) / N;
  const heapBytesPerRun = ((full.heapUsedMb + full.externalMb - baseline.heapUsedMb - baseline.externalMb) * 2 ** 20) / N;
  log(`full: RSS ${full.rssMb.toFixed(1)} MB (${fullNoGc.rssMb.toFixed(1)} before GC), heap used ${full.heapUsedMb.toFixed(1)} MB: ${bytesPerRun.toFixed(0)} B of RSS, ${heapBytesPerRun.toFixed(0)} B of V8 heap + external per run`);

  // Autovacuum would otherwise wake for the million new rows in the middle of a rebuild.
  await withClient(db.url, (c) => c.query(`VACUUM (ANALYZE) ${db.schema}.runs`));

  // --- rebuilds ----------------------------------------------------------
  const rebuilds: RebuildResult[] = [];
  let skipped: string | undefined;
  for (let i = 0; i < opts.rebuilds; i++) {
    const expectedMs = Math.max(30_000, rebuilds.length ? 3 * Math.max(...rebuilds.map((r) => r.spawnToLoadedMs)) : (N / 20_000) * 1000);
    if (earliestDue - Date.now() < expectedMs + DUE_MARGIN_MS) {
      skipped = `rebuild ${i + 1} skipped: the runs come due in ${Math.round((earliestDue - Date.now()) / 1000)} s (raise --memory-window)`;
      log(skipped);
      break;
    }
    const background = await machineBusyPct(1_000);
    await d.daemon.kill();
    await d.stop();
    const label = String.fromCharCode(98 + i); // b, c, d, …
    const cpuA = cpuSnapshot();
    const next = await startDaemon(opts, db, res, W, maxInWindow, label);
    d = next;
    const loaded = (): { runs: number; at: number; scans: RebuildResult['scans'] } => {
      let runs = 0;
      let at = NaN;
      const scans: RebuildResult['scans'] = [];
      for (const l of next.daemon.logs) {
        if (l.msg !== 'window loaded') continue;
        scans.push({ shards: Number(l.shards), runs: Number(l.runs), ms: Number(l.ms) });
        runs += Number(l.runs);
        if (runs >= N && !Number.isFinite(at)) at = wallMs(l);
      }
      return { runs, at, scans };
    };
    const timeoutMs = Math.min(180_000, earliestDue - Date.now() - DUE_MARGIN_MS / 2);
    let complete = true;
    await waitFor('the new daemon to load the window', timeoutMs, () => loaded().runs >= N, 20).catch((err: unknown) => {
      complete = false;
      log(String(err));
    });
    const cpuB = cpuSnapshot();
    const l = loaded();
    const firstAcquired = next.daemon.logs.find((x) => x.msg === 'shard acquired');
    const t0 = firstAcquired ? wallMs(firstAcquired) : NaN;
    const end = complete ? l.at : Date.now();
    const after = await readMemory(next, true);
    const r: RebuildResult = {
      runs: l.runs,
      runsPerS: l.runs / ((end - t0) / 1000),
      firstAcquiredToLoadedMs: end - t0,
      spawnToLoadedMs: end - next.spawnedAt,
      scans: l.scans,
      cpu: cpuBetween(cpuA, cpuB, { daemonPid: next.daemon.pid, workerPid: process.pid, benchPid: process.pid, database: db.name }),
      backgroundPct: background,
      after,
      complete,
    };
    rebuilds.push(r);
    log(`rebuild ${i + 1}: ${r.runs.toLocaleString('en-US')} runs in ${r.firstAcquiredToLoadedMs} ms after the first acquisition = ${Math.round(r.runsPerS).toLocaleString('en-US')} runs/s (spawn → full ${r.spawnToLoadedMs} ms)`);
  }

  return {
    runs: N,
    windowMs: W,
    shardCount: opts.shardCount,
    sqlInsertPerS,
    baseline,
    fullNoGc,
    full,
    bytesPerRun,
    heapBytesPerRun,
    rebuilds,
    skipped,
    backgroundPct,
  };
}
