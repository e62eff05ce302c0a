/**
 * `npm run bench:recurring`: many recurring jobs firing at once, on one
 * daemon and then on three with one killed (kill -9) in the middle. Does
 * every occurrence fire exactly once, how late, and how fast do the
 * materialisers turn occurrences into runs?
 *
 * The load (defaults): 100,000 interval jobs — 2% every second, 98% every
 * minute, all of the per-minute ones at the same instant (a minute boundary:
 * 98,000 runs due in one millisecond), overlap allow_all — about 3,600 due
 * runs/s on average, over a span of 120 s. Each job is limited to the span
 * (start_at = t0, end_at = t1 − 1), so the occurrences that must fire are
 * exactly `phase + k·every` in [first, t1): no settle margin to guess.
 *
 * A phase (per --daemons value; both by default, 1 then 3), on
 * infrastructure of its own:
 *   setup     fresh database (migrated, 64 shards) + Redis prefix, the
 *             daemons (child processes a[, b, c]), wait until the shards are
 *             owned (spread over all three), one in-process worker
 *             (createWorker, credit --concurrency per daemon) that completes
 *             every run at once and records it
 *   probe     a few far-future recurring jobs, to estimate the ingest rate
 *             and so place t0 after the ingest
 *   ingest    every job with the raw ScheduleBatch (1000 per call,
 *             --ingest-parallel calls in flight, spread over the daemons)
 *   span      [t0, t1): the materialisers make occurrences 30 s ahead (the
 *             window) and the fast lane fires them. The per-minute jobs come
 *             due at t0 + 10 s (and every 60 s after). 3 daemons: at
 *             t0 + --kill-at the member owning the most shards (b on a tie,
 *             or when ListShards does not answer) is killed -9
 *   drain     until every expected occurrence arrived, or t1 + --grace; with
 *             a kill, at least until kill + run lease + 5 s, so same-run
 *             redeliveries (a completion the dead daemon never recorded)
 *             are seen and counted
 *   teardown  worker, clients, daemons, Redis keys, database (Resources):
 *             at the end, on error, on Ctrl-C and past --budget
 *
 * Figures (per phase): expected occurrences, fired (distinct expected
 * occurrences received), lost (expected − fired), duplicates (occurrences
 * received under more than one run id), redeliveries (the same run received
 * again), lag = worker receipt − nominal time, materialised_per_s (runs of
 * origin 'schedule' created during the span, per second, from Postgres).
 *
 * stdout: the machine, one block per phase, then with --json one object
 * per phase, the last line being the last phase's. Progress goes to stderr.
 * Everything else the bench needs is in bench/lib (shared with fire-lag and
 * failover); this file holds what is particular to recurring jobs.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { createWorker, timelaneV1, wallNowMs, type Worker } from '@timelane/client';
import type { AdminClient } from '../proto/gen/timelane/v1/Admin.js';
import type { SchedulerClient } from '../proto/gen/timelane/v1/Scheduler.js';
import type { ScheduleRequest } from '../proto/gen/timelane/v1/ScheduleRequest.js';
import type { ScheduleBatchResponse__Output } from '../proto/gen/timelane/v1/ScheduleBatchResponse.js';
import type { ShardInfo__Output } from '../proto/gen/timelane/v1/ShardInfo.js';
import { DaemonProcess } from '../ops/local/daemon-process.js';
import { numberFlag } from './lib/args.js';
import { killStrayDaemons, waitFor } from './lib/bench-daemon.js';
import { cpuBetweenSnapshots, type FailoverCpu } from './lib/failover-cpu.js';
import { benchRedisPrefix, checkServers, createBenchDatabase, type BenchDatabase } from './lib/infra.js';
import { machineInfo, machineLine, type MachineInfo } from './lib/machine.js';
import { cpuSnapshot, RssSampler, waitForQuietMachine, type CpuSnapshot } from './lib/proc.js';
import { receiptNowMs } from './lib/receipt-clock.js';
import { installStopHandlers, onExitKill, Resources } from './lib/resources.js';
import { round, summarize, type LagSummary } from './lib/stats.js';

const QUEUE = 'recurring';
const PROBE_QUEUE = 'recurring-probe';
const MEMBERS = ['a', 'b', 'c'];
const BATCH = 1000;
const FAST_EVERY_MS = 1_000;
const SLOW_EVERY_MS = 60_000;
/** The per-minute jobs first come due this long after t0 (then every minute). */
const FIRST_BURST_AFTER_MS = 10_000;
/** Ingest is assumed this much slower than the probe when placing t0 (the probe's jobs make no runs). */
const PROBE_SAFETY = 0.7;

// ---------------------------------------------------------------- options

interface RecurringOptions {
  jobs: number;
  /** Share of the jobs that fire every second; the rest fire every minute. */
  fastShare: number;
  seconds: number;
  /** Phases to run, in order. */
  daemons: (1 | 3)[];
  /** Seconds after t0 at which one of three daemons is killed -9. */
  killAtSeconds: number;
  /** Per-minute jobs spread over the minute instead of all at one instant. */
  spread: boolean;
  adminUrl: string;
  redisUrl: string;
  json: boolean;
  /** Worker credit per daemon. */
  concurrency: number;
  ingestParallel: number;
  /** Seconds between the estimated end of ingest and t0. */
  leadSeconds: number;
  /** Seconds after t1 the drain may last. */
  graceSeconds: number;
  /** Delivery lease of every run (a run the killed daemon handed out is redelivered after it). */
  leaseMs: number;
  shardCount: number;
  quietWaitSeconds: number;
  quietBelowPct: number;
  budgetSeconds: number;
  echoDaemon: boolean;
  daemonArgs: string[];
}

const USAGE = `usage: npm run bench:recurring -- [flags]

Recurring jobs at scale: --jobs interval jobs (a share every second, the rest
every minute, all due at the same instant), firing for --seconds, on one daemon
and then on three with one killed -9 in the middle. Reports expected / fired /
lost / duplicate occurrences, lag = worker receipt - nominal time, and the
materialisation rate.

  --jobs <n>               recurring jobs (default 100000)
  --fast-share <f>         share of them firing every second, 0..1 (default 0.02); the rest fire every minute
  --seconds <s>            span over which occurrences must fire, 15..1800 (default 120)
  --daemons <1|3>          run only that phase (default: 1, then 3)
  --kill-at <s>            3 daemons: kill -9 one of them this long after t0 (default seconds / 2)
  --spread                 spread the per-minute jobs over the minute (default: all due at one instant)
  --database-url <url>     Postgres to create tl_bench_<random> on (default $TIMELANE_BENCH_DATABASE_URL
                           or postgres://postgres@127.0.0.1:5432/postgres, as npm run bench)
  --redis-url <url>        Redis for shard leases (default $TIMELANE_BENCH_REDIS_URL or redis://127.0.0.1:6379)
  --json                   one JSON object per phase after the report; the last line is the last phase's
  --concurrency <n>        worker credit per daemon (default 5000)
  --ingest-parallel <n>    ScheduleBatch calls in flight (default 4)
  --lead <s>               seconds between the estimated end of ingest and t0 (default 5)
  --grace <s>              seconds after the span the drain may last (default 45: covers a 30 s run lease)
  --lease-ms <ms>          the runs' delivery lease (default 30000, the daemon's default)
  --shard-count <n>        shards of each fresh cluster (default 64)
  --quiet-wait <s>         before each phase, wait up to this long for the machine to be idle (default 60; 0 = don't)
  --quiet-below <pct>      "idle" = busy under this % of one core (default 25)
  --budget <s>             hard limit on the whole run (default (seconds + 300) per phase)
  --daemon-arg <flag>      extra daemon flag, repeatable (e.g. --daemon-arg=--database-pool-size=32)
  --echo-daemon            forward the daemons' log lines
  --help`;

function parseOptions(argv: string[]): RecurringOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      jobs: { type: 'string' },
      'fast-share': { type: 'string' },
      seconds: { type: 'string' },
      daemons: { type: 'string' },
      'kill-at': { type: 'string' },
      spread: { type: 'boolean', default: false },
      'database-url': { type: 'string', default: process.env.TIMELANE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: process.env.TIMELANE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
      json: { type: 'boolean', default: false },
      concurrency: { type: 'string' },
      'ingest-parallel': { type: 'string' },
      lead: { type: 'string' },
      grace: { type: 'string' },
      'lease-ms': { type: 'string' },
      'shard-count': { type: 'string' },
      'quiet-wait': { type: 'string' },
      'quiet-below': { type: 'string' },
      budget: { type: 'string' },
      'daemon-arg': { type: 'string', multiple: true, default: [] },
      'echo-daemon': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const seconds = numberFlag('--seconds', values.seconds, 120, 15, 1_800);
  let daemons: (1 | 3)[] = [1, 3];
  if (values.daemons !== undefined) {
    if (values.daemons !== '1' && values.daemons !== '3') throw new Error(`--daemons: must be 1 or 3 (got "${values.daemons}")`);
    daemons = [Number(values.daemons) as 1 | 3];
  }
  const killAtSeconds = numberFlag('--kill-at', values['kill-at'], seconds / 2, 1, seconds - 1);
  return {
    jobs: Math.round(numberFlag('--jobs', values.jobs, 100_000, 1, 10_000_000)),
    fastShare: numberFlag('--fast-share', values['fast-share'], 0.02, 0, 1),
    seconds,
    daemons,
    killAtSeconds,
    spread: values.spread,
    adminUrl: values['database-url'],
    redisUrl: values['redis-url'],
    json: values.json,
    concurrency: numberFlag('--concurrency', values.concurrency, 5_000, 1, 100_000),
    ingestParallel: numberFlag('--ingest-parallel', values['ingest-parallel'], 4, 1, 64),
    leadSeconds: numberFlag('--lead', values.lead, 5, 1, 300),
    graceSeconds: numberFlag('--grace', values.grace, 45, 1, 600),
    leaseMs: numberFlag('--lease-ms', values['lease-ms'], 30_000, 1_000, 3_600_000),
    shardCount: numberFlag('--shard-count', values['shard-count'], 64, 1, 65_536),
    quietWaitSeconds: numberFlag('--quiet-wait', values['quiet-wait'], 60, 0, 3_600),
    quietBelowPct: numberFlag('--quiet-below', values['quiet-below'], 25, 1, 10_000),
    budgetSeconds: numberFlag('--budget', values.budget, (seconds + 300) * daemons.length, 30, 86_400),
    echoDaemon: values['echo-daemon'],
    daemonArgs: values['daemon-arg'].flatMap((a) => (a.includes('=') && a.startsWith('--') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a])),
  };
}

function log(msg: string): void {
  process.stderr.write(`bench:recurring: ${msg}\n`);
}

// ---------------------------------------------------------------- the jobs

/**
 * The jobs of a phase and the span they fire in. Job i's occurrences are
 * phase[i] + k·every[i]; the ones that must fire are those in
 * [first[i], t1). first[i] is t0, or — for a job acknowledged after t0, when
 * ingest overran its estimate — its first occurrence after the
 * acknowledgement (one between the daemon's clock reading and the reply may
 * or may not have been made: such a receipt counts as `unexpected`, never as
 * lost).
 */
class JobSet {
  readonly every: Int32Array;
  readonly phase: Int32Array;
  readonly first: Float64Array;
  readonly ids: string[];
  readonly index = new Map<string, number>();
  /** Phase of the per-minute jobs when they all share one (not --spread). */
  readonly burstPhase: number;

  constructor(
    readonly count: number,
    fastShare: number,
    readonly t0: number,
    readonly t1: number,
    readonly spread: boolean,
  ) {
    this.every = new Int32Array(count);
    this.phase = new Int32Array(count);
    this.first = new Float64Array(count).fill(t0);
    this.ids = new Array<string>(count).fill('');
    this.burstPhase = (t0 + FIRST_BURST_AFTER_MS) % SLOW_EVERY_MS;
    const fast = Math.round(count * fastShare);
    const slow = count - fast;
    let k = 0;
    for (let i = 0; i < count; i++) {
      // Fast jobs spread evenly through the list, so every ingest batch carries its share.
      if (Math.floor(((i + 1) * fast) / count) > Math.floor((i * fast) / count)) {
        this.every[i] = FAST_EVERY_MS;
        this.phase[i] = t0 % FAST_EVERY_MS;
      } else {
        this.every[i] = SLOW_EVERY_MS;
        this.phase[i] = spread ? (this.burstPhase + Math.floor((k++ * SLOW_EVERY_MS) / slow)) % SLOW_EVERY_MS : this.burstPhase;
      }
    }
  }

  get fast(): number {
    let n = 0;
    for (let i = 0; i < this.count; i++) if (this.every[i] === FAST_EVERY_MS) n++;
    return n;
  }

  request(i: number, leaseMs: number): ScheduleRequest {
    return {
      queue: QUEUE,
      leaseMs,
      recurrence: {
        interval: { everyMs: this.every[i], phaseMs: this.phase[i] },
        startAtMs: String(this.t0),
        endAtMs: String(this.t1 - 1),
        overlap: 'OVERLAP_ALLOW_ALL',
      },
    };
  }

  /** The job's first occurrence at or after `from`. */
  private occurrenceFrom(i: number, from: number): number {
    const e = this.every[i];
    const p = this.phase[i];
    return p + Math.ceil((from - p) / e) * e;
  }

  acknowledged(i: number, jobId: string, ackedAtMs: number): void {
    this.ids[i] = jobId;
    this.index.set(jobId, i);
    if (ackedAtMs >= this.t0) this.first[i] = this.occurrenceFrom(i, Math.floor(ackedAtMs) + 1);
  }

  /** The occurrences job i must fire. */
  *expectedOf(i: number): Generator<number> {
    for (let t = this.occurrenceFrom(i, this.first[i]); t < this.t1; t += this.every[i]) yield t;
  }

  expectedCount(i: number): number {
    const start = this.occurrenceFrom(i, this.first[i]);
    return start < this.t1 ? Math.floor((this.t1 - 1 - start) / this.every[i]) + 1 : 0;
  }

  isExpected(i: number, nominal: number): boolean {
    return nominal >= this.first[i] && nominal < this.t1 && (nominal - this.phase[i]) % this.every[i] === 0;
  }
}

// ---------------------------------------------------------------- the cluster

interface Member {
  id: string;
  daemon: DaemonProcess;
  scheduler: SchedulerClient;
  admin: AdminClient;
}

async function startMembers(ids: string[], db: BenchDatabase, prefix: string, opts: RecurringOptions, res: Resources): Promise<Member[]> {
  res.defer('kill stray daemons', () => killStrayDaemons(db.name));
  const v1 = timelaneV1();
  return Promise.all(
    ids.map(async (id) => {
      const daemon = await DaemonProcess.start({
        databaseUrl: db.url,
        redisUrl: opts.redisUrl,
        args: ['--member-id', id, '--redis-prefix', prefix, ...opts.daemonArgs],
        echo: opts.echoDaemon,
        startTimeoutMs: 30_000,
      });
      const unregisterKill = onExitKill(() => daemon.child.kill('SIGKILL'));
      res.defer(`stop daemon ${id}`, async () => {
        await daemon.stop(10_000);
        unregisterKill();
      });
      const scheduler = new v1.Scheduler(daemon.address, grpc.credentials.createInsecure());
      const admin = new v1.Admin(daemon.address, grpc.credentials.createInsecure(), { channelOverride: scheduler.getChannel() });
      res.defer(`close clients of ${id}`, () => scheduler.close());
      return { id, daemon, scheduler, admin };
    }),
  );
}

function listShards(m: Member, timeoutMs = 5_000): Promise<ShardInfo__Output[]> {
  return new Promise((resolve, reject) => {
    m.admin.listShards({}, { deadline: Date.now() + timeoutMs }, (err, out) => (err || !out ? reject(err ?? new Error('ListShards: no reply')) : resolve(out.shards)));
  });
}

function scheduleBatch(m: Member, requests: ScheduleRequest[]): Promise<ScheduleBatchResponse__Output> {
  return new Promise((resolve, reject) => {
    m.scheduler.scheduleBatch({ requests }, { deadline: Date.now() + 120_000 }, (err, out) =>
      err || !out ? reject(new Error(`ScheduleBatch on ${m.id}: ${err?.message ?? 'no reply'}`)) : resolve(out),
    );
  });
}

// ---------------------------------------------------------------- receipts

/** Every delivery the worker saw, in columns (wall-clock epoch ms; handled with sub-ms precision). */
class Receipts {
  readonly runId: number[] = [];
  /** `<job id>:<nominal ms>` (DeliveredRun.idempotency_key). */
  readonly key: string[] = [];
  readonly dueAtMs: number[] = [];
  readonly claimedAtMs: number[] = [];
  readonly firedAtMs: number[] = [];
  readonly arrivedAtMs: number[] = [];
  readonly handledAtMs: number[] = [];

  get length(): number {
    return this.runId.length;
  }
}

function startWorker(members: Member[], concurrency: number, receipts: Receipts, errors: string[], res: Resources): Worker {
  const worker = createWorker({
    address: members.map((m) => m.daemon.address),
    queues: [QUEUE],
    concurrency,
    workerId: `bench-recurring-${process.pid}`,
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    closeTimeoutMs: 3_000,
    handler: (run) => {
      // The handler returns at once: the run is completed.
      const handled = receiptNowMs();
      receipts.runId.push(Number(run.runId));
      receipts.key.push(run.idempotencyKey);
      receipts.dueAtMs.push(run.dueAtMs);
      receipts.claimedAtMs.push(run.claimedAtMs);
      receipts.firedAtMs.push(run.firedAtMs);
      // Arrival was stamped by the client library's clock: move it onto the receipt clock.
      receipts.arrivedAtMs.push(run.arrivedAtMs + (handled - wallNowMs()));
      receipts.handledAtMs.push(handled);
    },
    onError: (err) => {
      if (errors.length < 1_000) errors.push(err.message);
    },
  });
  res.defer('close worker', () => worker.close(3_000));
  return worker;
}

/**
 * Classifies receipts as they come (the drain waits on it): first receipt
 * of each occurrence, the run id it came under, and whether the occurrence
 * was one the job had to fire.
 */
class Tally {
  /** Occurrence key → index of its first receipt. */
  readonly firstReceipt = new Map<string, number>();
  private readonly runOf = new Map<string, number>();
  private readonly runsSeen = new Set<number>();
  /** Occurrences received under more than one run id. */
  readonly duplicated = new Set<string>();
  /** The same run received again; and of those, after the kill. */
  redeliveries = 0;
  redeliveriesAfterKill = 0;
  expectedReceived = 0;
  unexpected = 0;
  private cursor = 0;

  constructor(
    private readonly jobs: JobSet,
    private readonly r: Receipts,
  ) {}

  absorb(killAt: number): void {
    const r = this.r;
    for (; this.cursor < r.length; this.cursor++) {
      const i = this.cursor;
      const key = r.key[i];
      const id = r.runId[i];
      if (this.runsSeen.has(id)) {
        this.redeliveries++;
        if (r.handledAtMs[i] >= killAt) this.redeliveriesAfterKill++;
      } else this.runsSeen.add(id);
      const firstRun = this.runOf.get(key);
      if (firstRun !== undefined) {
        if (firstRun !== id) this.duplicated.add(key);
        continue;
      }
      this.runOf.set(key, id);
      this.firstReceipt.set(key, i);
      const colon = key.lastIndexOf(':');
      const job = this.jobs.index.get(key.slice(0, colon));
      if (job !== undefined && this.jobs.isExpected(job, Number(key.slice(colon + 1)))) this.expectedReceived++;
      else this.unexpected++;
    }
  }
}

// ---------------------------------------------------------------- Postgres's view

async function withDb<T>(db: BenchDatabase, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    await c.query(`SET search_path TO ${db.schema}`);
    return await fn(c);
  } finally {
    await c.end();
  }
}

interface Materialisation {
  /** Runs of origin 'schedule' created during [t0, t1). */
  madeInSpan: number;
  /** Runs whose nominal time is in [t0, t1). */
  nominalInSpan: number;
  /** How long before its nominal time a run of the span was made, s: min, 0.1%, 1%, 50%. */
  aheadS: { min: number; p001: number; p01: number; p50: number };
  /** Runs of the span made after their nominal time. */
  madeLate: number;
  runStatus: Record<string, number>;
  jobStatus: Record<string, number>;
  /** Runs of origin 'schedule' created per 10 s (key: start of the 10 s, s after t0). */
  madePer10s: Map<number, number>;
}

async function materialisation(db: BenchDatabase, t0: number, t1: number): Promise<Materialisation> {
  return withDb(db, async (c) => {
    const span = [t0, t1, QUEUE];
    const { rows: made } = await c.query<{ made: number; nominal: number; late: number; q: (number | null)[] | null }>(
      `SELECT count(*) FILTER (WHERE created_at >= to_timestamp($1::float8 / 1000) AND created_at < to_timestamp($2::float8 / 1000))::int AS made,
              count(*) FILTER (WHERE nominal_at >= to_timestamp($1::float8 / 1000) AND nominal_at < to_timestamp($2::float8 / 1000))::int AS nominal,
              count(*) FILTER (WHERE nominal_at >= to_timestamp($1::float8 / 1000) AND nominal_at < to_timestamp($2::float8 / 1000) AND created_at > nominal_at)::int AS late,
              percentile_disc(ARRAY[0, 0.001, 0.01, 0.5]::float8[]) WITHIN GROUP (ORDER BY extract(epoch FROM nominal_at - created_at)::float8)
                FILTER (WHERE nominal_at >= to_timestamp($1::float8 / 1000) AND nominal_at < to_timestamp($2::float8 / 1000)) AS q
         FROM runs WHERE origin = 'schedule' AND queue = $3`,
      span,
    );
    const { rows: runs } = await c.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs WHERE queue = $1 GROUP BY 1 ORDER BY 1`, [QUEUE]);
    const { rows: jobs } = await c.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM jobs WHERE queue = $1 GROUP BY 1 ORDER BY 1`, [QUEUE]);
    const { rows: per10 } = await c.query<{ b: number; n: number }>(
      `SELECT (floor((extract(epoch FROM created_at) * 1000 - $1::float8) / 10000) * 10)::int AS b, count(*)::int AS n
         FROM runs WHERE origin = 'schedule' AND queue = $2 GROUP BY 1 ORDER BY 1`,
      [t0, QUEUE],
    );
    const q = made[0]?.q ?? [];
    const at = (k: number): number => (q[k] === null || q[k] === undefined ? NaN : Number(q[k]));
    return {
      madeInSpan: made[0]?.made ?? 0,
      nominalInSpan: made[0]?.nominal ?? 0,
      aheadS: { min: at(0), p001: at(1), p01: at(2), p50: at(3) },
      madeLate: made[0]?.late ?? 0,
      runStatus: Object.fromEntries(runs.map((r) => [r.status, r.n])),
      jobStatus: Object.fromEntries(jobs.map((r) => [r.status, r.n])),
      madePer10s: new Map(per10.map((r) => [r.b, r.n])),
    };
  });
}

/** What Postgres holds for occurrences the worker never received: their run's status, or 'no run'. */
async function lostStatus(db: BenchDatabase, lost: { jobId: string; nominal: number }[]): Promise<Record<string, number>> {
  if (lost.length === 0) return {};
  return withDb(db, async (c) => {
    const { rows } = await c.query<{ status: string; n: number }>(
      `SELECT coalesce(r.status, 'no run') AS status, count(*)::int AS n
         FROM unnest($1::uuid[], $2::int8[]) AS l(job_id, nominal_ms)
         LEFT JOIN runs r ON r.job_id = l.job_id AND r.nominal_at = to_timestamp(l.nominal_ms::float8 / 1000) AND r.attempt = 1
        GROUP BY 1 ORDER BY 1`,
      [lost.map((l) => l.jobId), lost.map((l) => String(l.nominal))],
    );
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  });
}

// ---------------------------------------------------------------- a phase

interface KillRecord {
  victim: string;
  shards: number;
  /** Seconds after t0. */
  atS: number;
  /** kill → the survivors own every shard, ms (NaN: not within the drain). */
  takeoverMs: number;
}

interface SecondRow {
  second: number;
  runs: number;
  p50: number;
  p99: number;
  max: number;
}

interface PhaseResult {
  daemons: number;
  jobs: number;
  fastJobs: number;
  seconds: number;
  spread: boolean;
  expected: number;
  fired: number;
  lost: number;
  duplicates: number;
  redeliveries: number;
  redeliveriesAfterKill: number;
  unexpected: number;
  lag: LagSummary;
  lagFast: LagSummary;
  lagSlow: LagSummary;
  /** Stages of the first receipt of each expected occurrence, ms. */
  stages: { toClaimed: LagSummary; toFired: LagSummary; toWorker: LagSummary; inWorker: LagSummary };
  /** Per instant at which the per-minute jobs came due (not with --spread). */
  bursts: { atS: number; due: number; received: number; drainedMs: number; perS: number; p50: number; p99: number; max: number; toClaimedP99: number; toFiredP99: number; toWorkerP99: number }[];
  timeline: SecondRow[];
  /** Per 10 s after t0 (key: its start, s): occurrences due, runs made (created), occurrences received. */
  per10s: { s: number; due: number; made: number; received: number }[];
  materialisedPerS: number;
  mat: Materialisation;
  ingest: { seconds: number; perS: number; callMs: LagSummary; probePerS: number; leadMs: number; ackedLate: number };
  kill: KillRecord | undefined;
  /** Lag of occurrences due in the 10 s after the kill. */
  lagAfterKill: LagSummary | undefined;
  lostStatus: Record<string, number>;
  lostSample: string[];
  drainS: number;
  cpu: FailoverCpu[];
  daemonRssMb: number;
  workerErrors: number;
  warnings: string[];
  busyBeforePct: number;
}

async function runPhase(opts: RecurringOptions, n: 1 | 3): Promise<PhaseResult> {
  const res = new Resources();
  try {
    return await phase(opts, n, res);
  } finally {
    log('stopping worker, clients, daemons, Redis keys and database');
    await res.closeAll();
  }
}

async function phase(opts: RecurringOptions, n: 1 | 3, res: Resources): Promise<PhaseResult> {
  let busyBeforePct = NaN;
  if (opts.quietWaitSeconds > 0) {
    let told = false;
    busyBeforePct = await waitForQuietMachine(opts.quietBelowPct, opts.quietWaitSeconds * 1000, (busy) => {
      if (!told) log(`machine busy (${Math.round(busy)}% of a core, not ours): waiting up to ${opts.quietWaitSeconds} s for it to settle`);
      told = true;
    });
  }

  // --- setup ---------------------------------------------------------------
  const db = await createBenchDatabase(opts.adminUrl, opts.shardCount, [], res);
  const prefix = benchRedisPrefix(opts.redisUrl, res);
  const ids = MEMBERS.slice(0, n);
  log(`${n} daemon${n > 1 ? 's' : ''}: database ${db.name}, redis prefix ${prefix}; starting ${ids.join(', ')}`);
  const members = await startMembers(ids, db, prefix, opts, res);
  await waitFor(`the shards to be owned${n > 1 ? ' and spread over every daemon' : ''}`, 60_000, async () => {
    const shards = await listShards(members[0]).catch(() => []);
    const owners = new Set(shards.map((s) => s.owner));
    return shards.length === opts.shardCount && shards.every((s) => s.owner !== '' && s.owner === s.assignedTo) && ids.every((m) => owners.has(m));
  }, 200);
  const rss = members.map((m) => new RssSampler(m.daemon.pid, 500).start());
  res.defer('stop rss samplers', () => rss.forEach((s) => s.stop()));
  const receipts = new Receipts();
  const workerErrors: string[] = [];
  startWorker(members, opts.concurrency, receipts, workerErrors, res);

  // --- probe: ingest rate of recurring jobs that make no run ----------------
  const probeStart = Date.now() + 86_400_000;
  const probeRequests = (): ScheduleRequest[] =>
    Array.from({ length: BATCH }, () => ({
      queue: PROBE_QUEUE,
      recurrence: { interval: { everyMs: SLOW_EVERY_MS, phaseMs: 0 }, startAtMs: String(probeStart), endAtMs: String(probeStart + 3_600_000), overlap: 'OVERLAP_ALLOW_ALL' },
    }));
  const probeLanes = Math.min(opts.ingestParallel, 4);
  const probeT = performance.now();
  await Promise.all(Array.from({ length: probeLanes }, (_, l) => scheduleBatch(members[l % n], probeRequests())));
  const probePerS = (probeLanes * BATCH) / ((performance.now() - probeT) / 1000);

  // --- ingest ---------------------------------------------------------------
  const estimateMs = (opts.jobs / (probePerS * PROBE_SAFETY)) * 1000;
  const t0 = Math.ceil((Date.now() + estimateMs + opts.leadSeconds * 1000) / 1000) * 1000;
  const t1 = t0 + opts.seconds * 1000;
  const jobs = new JobSet(opts.jobs, opts.fastShare, t0, t1, opts.spread);
  log(`probe ${Math.round(probePerS)} jobs/s; ingesting ${opts.jobs} jobs (${jobs.fast} every 1 s), t0 in ${Math.round((t0 - Date.now()) / 1000)} s`);
  const callMs: number[] = [];
  let ackedLate = 0;
  let next = 0;
  const ingestT = performance.now();
  await Promise.all(
    Array.from({ length: opts.ingestParallel }, async (_, lane) => {
      const m = members[lane % n];
      while (next < opts.jobs) {
        const from = next;
        const to = Math.min(opts.jobs, from + BATCH);
        next = to;
        const requests: ScheduleRequest[] = [];
        for (let i = from; i < to; i++) requests.push(jobs.request(i, opts.leaseMs));
        const started = performance.now();
        const out = await scheduleBatch(m, requests);
        callMs.push(performance.now() - started);
        const ackedAt = Date.now();
        if (ackedAt >= t0) ackedLate += to - from;
        out.scheduled.forEach((s, k) => jobs.acknowledged(from + k, s.jobId, ackedAt));
      }
    }),
  );
  const ingestS = (performance.now() - ingestT) / 1000;
  const leadMs = t0 - Date.now();
  let expected = 0;
  for (let i = 0; i < jobs.count; i++) expected += jobs.expectedCount(i);
  log(`ingested in ${ingestS.toFixed(1)} s (${Math.round(opts.jobs / ingestS)} jobs/s), ${Math.round(leadMs)} ms before t0${ackedLate ? `; ${ackedLate} jobs acknowledged after t0` : ''}; ${expected} occurrences expected`);

  // --- span -----------------------------------------------------------------
  const tally = new Tally(jobs, receipts);
  const snaps: CpuSnapshot[] = [];
  const pids = members.map((m) => m.daemon.pid);
  await sleepUntil(t0);
  snaps.push(cpuSnapshot());
  log(`firing for ${opts.seconds} s…`);
  let kill: KillRecord | undefined;
  let killAt = Infinity;
  let takeover: Promise<void> = Promise.resolve();
  if (n > 1) {
    // Who owns what, as late before the kill as an answer comes (ListShards can take seconds under this load).
    const killPlanned = t0 + opts.killAtSeconds * 1000;
    await sleepUntil(killPlanned - 10_000);
    let shards: ShardInfo__Output[] | undefined;
    for (let k = 0; Date.now() < killPlanned - 300; k++) {
      shards = (await listShards(members[k % n], Math.max(100, killPlanned - 300 - Date.now())).catch(() => undefined)) ?? shards;
      await sleep(Math.min(1_000, Math.max(0, killPlanned - 300 - Date.now())));
    }
    const owned = (id: string): number => (shards ? shards.filter((s) => s.owner === id).length : NaN);
    const victim = shards ? ['b', ...ids.filter((x) => x !== 'b')].reduce((best, id) => (owned(id) > owned(best) ? id : best), 'b') : 'b';
    await sleepUntil(killPlanned);
    snaps.push(cpuSnapshot());
    killAt = wallNowMs();
    await members.find((m) => m.id === victim)?.daemon.kill();
    kill = { victim, shards: owned(victim), atS: (killAt - t0) / 1000, takeoverMs: NaN };
    log(`killed ${victim} (owned ${Number.isNaN(kill.shards) ? 'an unknown number of' : kill.shards} shards) at t0 + ${kill.atS.toFixed(1)} s`);
    const survivor = members.find((m) => m.id !== victim) as Member;
    const k = kill;
    takeover = waitFor('the survivors to own every shard', opts.seconds * 1000 + opts.graceSeconds * 1000, async () => {
      const s = await listShards(survivor).catch(() => []);
      return s.length === opts.shardCount && s.every((x) => x.owner !== '' && x.owner !== victim);
    }, 100).then(
      () => {
        k.takeoverMs = wallNowMs() - killAt;
        log(`survivors own every shard ${Math.round(k.takeoverMs)} ms after the kill`);
      },
      (err: unknown) => log(String(err)),
    );
  }
  while (Date.now() < t1) {
    tally.absorb(killAt);
    await sleep(Math.min(500, Math.max(1, t1 - Date.now())));
  }
  snaps.push(cpuSnapshot());

  // --- drain ----------------------------------------------------------------
  // With a kill: a run the dead daemon handed out whose completion it never
  // recorded comes again after its lease — wait for those, to count them.
  const minEnd = Number.isFinite(killAt) ? killAt + opts.leaseMs + 5_000 : 0;
  const hardEnd = Math.max(t1 + opts.graceSeconds * 1000, minEnd);
  for (;;) {
    tally.absorb(killAt);
    const now = Date.now();
    if (now >= hardEnd || (tally.expectedReceived >= expected && now >= minEnd)) break;
    await sleep(200);
  }
  tally.absorb(killAt);
  const drainS = (Date.now() - t1) / 1000;
  await takeover;
  rss.forEach((s) => s.stop());
  log(`drained ${drainS.toFixed(1)} s after the span; reading Postgres`);

  // --- results --------------------------------------------------------------
  const a = analyse(jobs, receipts, tally, killAt);
  const mat = await materialisation(db, t0, t1);
  const keys = [...a.due10.keys(), ...a.received10.keys(), ...mat.madePer10s.keys()];
  const per10s: PhaseResult['per10s'] = [];
  for (let b = Math.min(...keys); b <= Math.max(...keys); b += 10) {
    per10s.push({ s: b, due: a.due10.get(b) ?? 0, made: mat.madePer10s.get(b) ?? 0, received: a.received10.get(b) ?? 0 });
  }
  const lostSt = await lostStatus(db, a.lost.slice(0, 10_000)).catch((err: unknown) => ({ [`error: ${String(err)}`]: 0 }));
  const cpu: FailoverCpu[] = [];
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  for (let k = 1; k < snaps.length; k++) cpu.push(cpuBetweenSnapshots(snaps[k - 1], snaps[k], pids, db.name, cores));
  const warnings: string[] = [];
  for (const m of members) {
    for (const l of m.daemon.logs) if ((l.level ?? 0) >= 40 && warnings.length < 8) warnings.push(`${m.id}: ${String(l.msg).trim().slice(0, 160)}`);
  }
  return {
    daemons: n,
    jobs: opts.jobs,
    fastJobs: jobs.fast,
    seconds: opts.seconds,
    spread: opts.spread,
    expected,
    fired: tally.expectedReceived,
    lost: expected - tally.expectedReceived,
    duplicates: tally.duplicated.size,
    redeliveries: tally.redeliveries,
    redeliveriesAfterKill: tally.redeliveriesAfterKill,
    unexpected: tally.unexpected,
    ...a.figures,
    per10s,
    materialisedPerS: mat.madeInSpan / opts.seconds,
    mat,
    ingest: { seconds: ingestS, perS: opts.jobs / ingestS, callMs: summarize(callMs), probePerS, leadMs, ackedLate },
    kill,
    lostStatus: lostSt,
    lostSample: a.lost.slice(0, 5).map((l) => `${l.jobId}:${l.nominal} (t0 + ${((l.nominal - t0) / 1000).toFixed(0)} s)`),
    drainS,
    cpu,
    daemonRssMb: Math.max(...rss.map((s) => s.peakMb)),
    workerErrors: workerErrors.length,
    warnings,
    busyBeforePct,
  };
}

async function sleepUntil(wallMs: number): Promise<void> {
  const ms = wallMs - Date.now();
  if (ms > 0) await sleep(ms);
}

// ---------------------------------------------------------------- analysis

function analyse(jobs: JobSet, r: Receipts, tally: Tally, killAt: number) {
  const lags: number[] = [];
  const fast: number[] = [];
  const slow: number[] = [];
  const toClaimed: number[] = [];
  const toFired: number[] = [];
  const toWorker: number[] = [];
  const inWorker: number[] = [];
  const afterKill: number[] = [];
  const perSecond = new Map<number, number[]>();
  const burst = new Map<number, { lags: number[]; claimed: number[]; fired: number[]; worker: number[]; lastHandled: number; due: number }>();
  const lost: { jobId: string; nominal: number }[] = [];
  /** Per 10 s after t0: occurrences due, and first receipts of expected ones. */
  const due10 = new Map<number, number>();
  const received10 = new Map<number, number>();
  const bucket = (t: number): number => Math.floor((t - jobs.t0) / 10_000) * 10;
  const bump = (m: Map<number, number>, k: number): void => void m.set(k, (m.get(k) ?? 0) + 1);

  for (let j = 0; j < jobs.count; j++) {
    const isSlow = jobs.every[j] === SLOW_EVERY_MS;
    for (const nominal of jobs.expectedOf(j)) {
      const b = !jobs.spread && isSlow && nominal % SLOW_EVERY_MS === jobs.burstPhase ? burst.get(nominal) ?? { lags: [], claimed: [], fired: [], worker: [], lastHandled: -Infinity, due: 0 } : undefined;
      if (b) {
        b.due++;
        burst.set(nominal, b);
      }
      bump(due10, bucket(nominal));
      const i = tally.firstReceipt.get(`${jobs.ids[j]}:${nominal}`);
      if (i === undefined) {
        lost.push({ jobId: jobs.ids[j], nominal });
        continue;
      }
      const lag = r.handledAtMs[i] - nominal;
      bump(received10, bucket(r.handledAtMs[i]));
      lags.push(lag);
      (isSlow ? slow : fast).push(lag);
      toClaimed.push(r.claimedAtMs[i] - nominal);
      toFired.push(r.firedAtMs[i] - nominal);
      toWorker.push(r.arrivedAtMs[i] - r.firedAtMs[i]);
      inWorker.push(r.handledAtMs[i] - r.arrivedAtMs[i]);
      if (nominal >= killAt && nominal < killAt + 10_000) afterKill.push(lag);
      const sec = Math.floor((nominal - jobs.t0) / 1000);
      const list = perSecond.get(sec) ?? [];
      list.push(lag);
      perSecond.set(sec, list);
      if (b) {
        b.lags.push(lag);
        b.claimed.push(r.claimedAtMs[i] - nominal);
        b.fired.push(r.firedAtMs[i] - nominal);
        b.worker.push(r.arrivedAtMs[i] - r.firedAtMs[i]);
        b.lastHandled = Math.max(b.lastHandled, r.handledAtMs[i]);
      }
    }
  }
  const bursts = [...burst.entries()]
    .filter(([, b]) => b.due > 1)
    .sort((x, y) => x[0] - y[0])
    .map(([at, b]) => {
      const s = summarize(b.lags);
      const drainedMs = b.lastHandled - at;
      return {
        atS: (at - jobs.t0) / 1000,
        due: b.due,
        received: b.lags.length,
        drainedMs,
        perS: drainedMs > 0 ? b.lags.length / (drainedMs / 1000) : NaN,
        p50: s.p50,
        p99: s.p99,
        max: s.max,
        toClaimedP99: summarize(b.claimed).p99,
        toFiredP99: summarize(b.fired).p99,
        toWorkerP99: summarize(b.worker).p99,
      };
    });
  const timeline = [...perSecond.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([second, l]) => {
      const s = summarize(l);
      return { second, runs: s.count, p50: s.p50, p99: s.p99, max: s.max };
    });
  return {
    lost,
    due10,
    received10,
    figures: {
      lag: summarize(lags),
      lagFast: summarize(fast),
      lagSlow: summarize(slow),
      stages: { toClaimed: summarize(toClaimed), toFired: summarize(toFired), toWorker: summarize(toWorker), inWorker: summarize(inWorker) },
      bursts,
      timeline,
      lagAfterKill: Number.isFinite(killAt) ? summarize(afterKill) : undefined,
    },
  };
}

// ---------------------------------------------------------------- report

const int = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const ms = (v: number): string => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2)) : '-');
const lagLine = (s: LagSummary): string => `p50 ${ms(s.p50)} / p90 ${ms(s.p90)} / p99 ${ms(s.p99)} / p99.9 ${ms(s.p999)} / max ${ms(s.max)} ms (${int(s.count)})`;
const counts = (o: Record<string, number>): string => Object.entries(o).map(([k, v]) => `${k} ${int(v)}`).join(', ') || '-';

function phaseText(p: PhaseResult): string {
  const slowJobs = p.jobs - p.fastJobs;
  const kinds = [
    ...(p.fastJobs > 0 ? [`${int(p.fastJobs)} every 1 s`] : []),
    ...(slowJobs > 0 ? [`${int(slowJobs)} every 60 s${p.spread ? ' spread over the minute' : `, due together at t0 + ${FIRST_BURST_AFTER_MS / 1000} s and every minute after`}`] : []),
  ];
  const out: string[] = [];
  out.push(
    `\n== ${p.daemons} daemon${p.daemons > 1 ? 's' : ''}${p.kill ? `, ${p.kill.victim} killed -9 at t0 + ${p.kill.atS.toFixed(0)} s` : ''}: ${int(p.jobs)} jobs (${kinds.join(', ')}), span ${p.seconds} s, overlap allow_all`,
  );
  out.push(`machine busy before: ${Number.isFinite(p.busyBeforePct) ? `${Math.round(p.busyBeforePct)}% of a core` : 'not measured'}`);
  out.push(
    `ingest: ${int(p.jobs)} jobs in ${p.ingest.seconds.toFixed(1)} s = ${int(p.ingest.perS)} jobs/s (ScheduleBatch of ${BATCH}, p50 ${ms(p.ingest.callMs.p50)} / p99 ${ms(p.ingest.callMs.p99)} ms; probe ${int(p.ingest.probePerS)} jobs/s); t0 ${(p.ingest.leadMs / 1000).toFixed(1)} s after the last ack${p.ingest.ackedLate ? `; ${int(p.ingest.ackedLate)} jobs acknowledged after t0` : ''}`,
  );
  out.push(`| expected | fired | lost | duplicates | redeliveries (after kill) | unexpected | lag p50 ms | p99 ms | max ms | materialised/s |`);
  out.push(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
  out.push(
    `| ${int(p.expected)} | ${int(p.fired)} | ${int(p.lost)} | ${int(p.duplicates)} | ${int(p.redeliveries)} (${int(p.redeliveriesAfterKill)}) | ${int(p.unexpected)} | ${ms(p.lag.p50)} | ${ms(p.lag.p99)} | ${ms(p.lag.max)} | ${int(p.materialisedPerS)} |`,
  );
  out.push(`lag, all:            ${lagLine(p.lag)}`);
  out.push(`lag, every 1 s jobs: ${lagLine(p.lagFast)}`);
  out.push(`lag, every 60 s jobs: ${lagLine(p.lagSlow)}`);
  if (p.lagAfterKill) out.push(`lag, due in the 10 s after the kill: ${lagLine(p.lagAfterKill)}`);
  out.push(
    `stages p50 / p99 / max ms: nominal → claimed ${ms(p.stages.toClaimed.p50)} / ${ms(p.stages.toClaimed.p99)} / ${ms(p.stages.toClaimed.max)}; → handed to the stream (fired_at) ${ms(p.stages.toFired.p50)} / ${ms(p.stages.toFired.p99)} / ${ms(p.stages.toFired.max)}; fired_at → worker ${ms(p.stages.toWorker.p50)} / ${ms(p.stages.toWorker.p99)} / ${ms(p.stages.toWorker.max)}; in worker ${ms(p.stages.inWorker.p50)} / ${ms(p.stages.inWorker.p99)} / ${ms(p.stages.inWorker.max)}`,
  );
  for (const b of p.bursts) {
    out.push(
      `burst at t0 + ${b.atS} s: ${int(b.due)} due in one ms, ${int(b.received)} received, the last ${ms(b.drainedMs)} ms after due (${int(b.perS)}/s); lag p50 ${ms(b.p50)} / p99 ${ms(b.p99)} / max ${ms(b.max)} ms; p99 of nominal → claimed ${ms(b.toClaimedP99)}, → fired_at ${ms(b.toFiredP99)}, fired_at → worker ${ms(b.toWorkerP99)} ms`,
    );
  }
  const worst = [...p.timeline].sort((x, y) => y.max - x.max).slice(0, 5).sort((x, y) => x.second - y.second);
  out.push(`worst seconds (by max lag; second of nominal time after t0: runs, p50 / p99 / max ms): ${worst.map((w) => `${w.second}: ${int(w.runs)}, ${ms(w.p50)} / ${ms(w.p99)} / ${ms(w.max)}`).join('; ')}`);
  const m = p.mat;
  out.push(
    `materialised: ${int(m.madeInSpan)} runs (origin schedule) created during the span = ${int(p.materialisedPerS)}/s; ${int(m.nominalInSpan)} runs with a nominal time in the span, made ahead of it by min ${ms(m.aheadS.min)} s, 0.1% ${ms(m.aheadS.p001)} s, 1% ${ms(m.aheadS.p01)} s, median ${ms(m.aheadS.p50)} s; ${int(m.madeLate)} made after their nominal time`,
  );
  if (m.madeLate > 0) {
    out.push(
      `materialisation fell behind: ${int(m.madeLate)} of ${int(m.nominalInSpan)} runs of the span were made after their nominal time (the latest ${ms(-m.aheadS.min)} s after): their lag is the materialiser's, not the fast lane's${(m.runStatus.missed ?? 0) > 0 ? `; ${int(m.runStatus.missed)} occurrences recorded as missed (a job more than catch_up.max_runs = 100 occurrences behind fires only the latest 100)` : ''}`,
    );
  }
  out.push(`Postgres at the end: runs ${counts(m.runStatus)}; jobs ${counts(m.jobStatus)}`);
  out.push(`per 10 s (s after t0: occurrences due / runs made / occurrences received): ${p.per10s.map((b) => `${b.s}: ${int(b.due)} / ${int(b.made)} / ${int(b.received)}`).join('; ')}`);
  if (p.kill) {
    const owned = Number.isNaN(p.kill.shards) ? 'an unknown number of shards (ListShards did not answer)' : `${p.kill.shards} shards`;
    out.push(`kill: ${p.kill.victim} owned ${owned}; the survivors owned every shard ${ms(p.kill.takeoverMs)} ms after the kill`);
  }
  if (p.lost > 0) out.push(`lost occurrences in Postgres: ${counts(p.lostStatus)}; e.g. ${p.lostSample.join(', ')}`);
  const names = p.cpu.length > 1 ? ['before the kill', 'after the kill'] : ['span'];
  p.cpu.forEach((c, k) =>
    out.push(
      `CPU, ${names[k]} (${c.seconds.toFixed(0)} s, % of one core): daemons ${Math.round(c.daemons)}, Postgres (ours) ${Math.round(c.postgresOurs)}, bench + worker ${Math.round(c.bench)}, Postgres (other) ${Math.round(c.postgresOther)}, Redis ${Math.round(c.redis)}, other processes ${Math.round(c.other)}, machine ${Math.round(c.machine)}`,
    ),
  );
  out.push(`daemon RSS peak ${Math.round(p.daemonRssMb)} MB; drain ${p.drainS.toFixed(1)} s after the span; worker stream errors ${p.workerErrors}`);
  if (p.warnings.length) out.push(`daemon warnings (first ${p.warnings.length}): ${p.warnings.join(' | ')}`);
  const held = p.lost === 0 && p.duplicates === 0;
  out.push(
    held
      ? `verdict: every expected occurrence fired exactly once (redeliveries of the same run after the kill: ${int(p.redeliveriesAfterKill)})`
      : `verdict: NOT held — ${int(p.lost)} lost, ${int(p.duplicates)} duplicated${p.lost > 0 && (p.lostStatus.scheduled ?? 0) + (p.lostStatus.fired ?? 0) > 0 ? ' (runs still scheduled/fired at the end: the machine could not keep up within the drain)' : ''}`,
  );
  return out.join('\n');
}

function phaseJson(p: PhaseResult, machine: MachineInfo): string {
  const lag3 = (s: LagSummary | undefined) => (s ? { p50: round(s.p50), p99: round(s.p99), max: round(s.max) } : null);
  const total = p.cpu.reduce((s, c) => s + c.seconds, 0);
  const cpuPct = (key: keyof FailoverCpu): number | null => round(p.cpu.reduce((s, c) => s + c[key] * c.seconds, 0) / total, 0);
  return JSON.stringify({
    jobs: p.jobs,
    seconds: p.seconds,
    daemons: p.daemons,
    fired: p.fired,
    expected: p.expected,
    lost: p.lost,
    duplicates: p.duplicates,
    lag_ms: lag3(p.lag),
    materialised_per_s: round(p.materialisedPerS, 0),
    fast_jobs: p.fastJobs,
    spread: p.spread,
    redeliveries: p.redeliveries,
    redeliveries_after_kill: p.redeliveriesAfterKill,
    unexpected: p.unexpected,
    lag_ms_every_1s: lag3(p.lagFast),
    lag_ms_every_60s: lag3(p.lagSlow),
    lag_ms_after_kill: lag3(p.lagAfterKill),
    bursts: p.bursts.map((b) => ({ at_s: b.atS, due: b.due, received: b.received, drained_ms: round(b.drainedMs), per_s: round(b.perS, 0), p50: round(b.p50), p99: round(b.p99), max: round(b.max) })),
    kill: p.kill ? { victim: p.kill.victim, shards: p.kill.shards, at_s: round(p.kill.atS, 1), takeover_ms: round(p.kill.takeoverMs, 0) } : null,
    made_late: p.mat.madeLate,
    missed: p.mat.runStatus.missed ?? 0,
    made_ahead_min_s: round(p.mat.aheadS.min, 3),
    ingest_jobs_per_s: round(p.ingest.perS, 0),
    ingest_s: round(p.ingest.seconds, 1),
    cpu_pct: { daemons: cpuPct('daemons'), postgres: cpuPct('postgresOurs'), bench_worker: cpuPct('bench'), other: cpuPct('other'), machine: cpuPct('machine') },
    daemon_rss_mb: round(p.daemonRssMb, 0),
    per_10s: p.per10s,
    machine,
  });
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  let opts: RecurringOptions | 'help';
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench:recurring: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  installStopHandlers(opts.budgetSeconds * 1000);
  await checkServers(opts.adminUrl, opts.redisUrl);
  const machine = await machineInfo(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(machine)}\n`);
  const results: PhaseResult[] = [];
  for (const n of opts.daemons) {
    const p = await runPhase(opts, n);
    results.push(p);
    process.stdout.write(`${phaseText(p)}\n`);
  }
  if (opts.json) for (const p of results) process.stdout.write(`${phaseJson(p, machine)}\n`);
  return results.every((p) => p.lost === 0 && p.duplicates === 0) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:recurring: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    // Resources were closed by the phase's finally; the exit hook SIGKILLs any daemon left.
    process.exit(1);
  },
);
