/**
 * Flags of `npm run bench` (bench/fire-lag.ts), parsed with node:util and
 * validated with messages that name the flag and the rule broken.
 */
import { parseArgs } from 'node:util';
import type { WorkerMode } from './workers.js';

/**
 * How runs reach the daemon in a fire-lag trial:
 * - steady: a scheduler loop keeps ScheduleBatch-ing runs due --lead s ahead,
 *   at the fire rate, for the whole fire phase (ingest interleaved with firing);
 * - burst: fresh daemon, no warm-up; every run scheduled (chunks of --batch,
 *   one call at a time, in due order) in the seconds just before the first
 *   one comes due;
 * - upfront: every run scheduled (4 calls in flight) before the first due
 *   time, after a warm-up: the bench's single pattern until 2026-11.
 */
export type Pattern = 'steady' | 'burst' | 'upfront';
export const PATTERNS: readonly Pattern[] = ['steady', 'burst', 'upfront'];
/** What `npm run bench` runs when no --pattern is given. */
export const SUITE_PATTERNS: readonly Pattern[] = ['steady', 'burst'];

export interface BenchOptions {
  /** One rate (runs due per second); undefined runs the suite. */
  rate: number | undefined;
  /** Patterns to run, in order (--pattern; default: the suite's steady and burst). */
  patterns: Pattern[];
  /** --memory: the window trial (bytes per in-window run, rebuild rate) instead of fire lag. */
  memory: boolean;
  /** Runs placed in the window by --memory. */
  windowRuns: number;
  /** Kill -9 + rebuild rounds of --memory. */
  rebuilds: number;
  /** The daemon's window W (s) in --memory. */
  memoryWindowSeconds: number;
  /** Burst: assumed ScheduleBatch rate (runs/s, one call at a time) that places the first due time. */
  burstIngestRate: number;
  seconds: number;
  json: boolean;
  adminUrl: string;
  redisUrl: string;
  /** Base of the daemon's Redis key prefix; a random part is always appended. */
  redisPrefix: string;
  worker: WorkerMode;
  concurrency: number;
  /** The child worker's V8 interrupt budget (tuneJitForLatency); 0 = V8's default. */
  workerJitBudget: number;
  batchSize: number;
  ingestParallel: number;
  leadSeconds: number;
  /**
   * Steady/upfront: fire rate × this many runs at the trial's rate before it
   * (0: the 200-run path check only); undefined: STEADY_WARMUP_SECONDS for
   * steady (a daemon and a worker in service), 0 for upfront.
   */
  warmupSeconds: number | undefined;
  /** Jobs scheduled a year ahead before the trial, then a CHECKPOINT: a database in service, not a fresh one (0: none). */
  preloadJobs: number;
  graceSeconds: number;
  shardCount: number;
  daemonArgs: string[];
  profile: boolean;
  budgetSeconds: number | undefined;
  echoDaemon: boolean;
  /** ALTER DATABASE <bench db> SET name = value, for experiments (e.g. synchronous_commit=off). */
  dbSettings: [string, string][];
  /** Write a V8 CPU profile of the daemon into this folder (NODE_OPTIONS=--cpu-prof). */
  daemonCpuProf: string | undefined;
  /** Node options for the daemon process only (its NODE_OPTIONS), e.g. a V8 heap setting. */
  daemonNodeOptions: string | undefined;
  /** Before each trial, wait up to this long for the machine to be idle (0: don't). */
  quietWaitSeconds: number;
  /** "Idle": busy under this % of one core. */
  quietBelowPct: number;
}

export const USAGE = `usage: npm run bench -- [flags]

Fire lag of one timelane daemon against real Postgres and Redis: runs due at
a steady rate, received by a gRPC worker; lag = worker receipt - due_at.

  --pattern <p>              steady | burst | upfront, repeatable (default: steady, then burst)
                               steady: ingest keeps going while runs fire (scheduled --lead s before due, at the rate)
                               burst: fresh daemon, no warm-up, all runs scheduled one call at a time just before due
                               upfront: all runs scheduled before the first is due (the earlier single pattern)
  --rate <n>                 runs due per second (default: suite 1000, 5000, and 10000 if 5000 held, per pattern)
  --seconds <n>              how long runs keep coming due (default 15)
  --json                     print one JSON object per rate; the last line is the last rate's
  --database-url-admin <url> Postgres to create tl_bench_<random> on (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>          Redis for shard leases (default redis://127.0.0.1:6379)
  --redis-prefix <p>         base of the unique key prefix (default tl_bench_)
  --worker <inline|child>    run the worker in the bench process or in a child process (default child)
  --concurrency <n>          worker credit / max in flight (default 1000)
  --worker-jit-budget <n>    child worker: tuneJitForLatency(n) at its start (default 0 = V8's default, 67,584);
                             with --daemon-arg=--jit-interrupt-budget=N the daemon's too (README, TypeScript client)
  --batch <n>                runs per ScheduleBatch, 1..1000 (default 1000)
  --ingest-parallel <n>      ScheduleBatch calls in flight (default 4)
  --lead <s>                 steady: how far ahead of due runs are scheduled; burst/upfront: seconds between the
                             end of ingest (estimated) and the first due time (default 3)
  --burst-ingest-rate <n>    burst: ScheduleBatch runs/s assumed when placing the first due time (default 15000;
                             measured 33–40k/s one call at a time on an idle 2-core box)
  --warmup-seconds <s>       steady/upfront: before the trial, fire rate × s runs at the rate (a daemon and a worker
                             in service: JIT and connections warm); default 1 for steady, 0 for upfront; 0 = only the
                             200-run path check (a cold start). Burst never warms up: it is the cold start
  --preload-jobs <n>         before the trial (and its warm-up), n jobs scheduled a year ahead on a queue nobody
                             reads, then a CHECKPOINT: the trial's writes meet tables and indexes of a database in
                             service, after a checkpoint (default 0 = a fresh database). Not with burst; whole
                             numbers up to 10,000,000; the preload's time counts against --budget
  --grace <s>                seconds to wait after the last due time (default 5)
  --shard-count <n>          shards of the fresh cluster (default 64)
  --daemon-arg <flag>        extra daemon flag, repeatable (e.g. --daemon-arg=--database-pool-size=32)
  --profile                  enable the daemon's /metrics and report its timer/claim lag and event-loop delay
  --budget <s>               hard limit on the whole run; everything is stopped past it (default 300 per rate)
  --echo-daemon              forward the daemon's log lines
  --db-set <name=value>      ALTER DATABASE <bench db> SET name = value before the daemon starts, repeatable (experiments)
  --daemon-cpu-prof <dir>    write a V8 CPU profile of the daemon (.cpuprofile) into <dir>
  --daemon-node-options=<o>  NODE_OPTIONS for the daemon process only, e.g. --daemon-node-options=--max-semi-space-size=64
  --quiet-wait <s>           before each rate, wait up to this long for the machine to be idle (default 120; 0 = don't)
  --quiet-below <pct>        "idle" = busy under this % of one core (default 25)
  --memory                   instead of fire lag: bytes of daemon RSS per in-window run, and the window rebuild
                             rate after kill -9 (bench/lib/window-trial.ts)
  --window-runs <n>          --memory: runs placed in the window (default 1000000)
  --rebuilds <n>             --memory: kill -9 + rebuild rounds (default 3)
  --memory-window <s>        --memory: the daemon's window W in seconds (default 300)
  --help`;

/** --preload-jobs: a whole number, and not with burst (the preload goes through the daemon, which would meet the burst warm). */
function preloadJobs(raw: string | undefined, patterns: readonly string[]): number {
  const n = numberFlag('--preload-jobs', raw, 0, 0, 10_000_000);
  if (!Number.isInteger(n)) throw new Error(`--preload-jobs: must be a whole number (got "${raw}")`);
  if (n > 0 && patterns.includes('burst')) throw new Error('--preload-jobs: not with the burst pattern (the preload would warm the daemon the burst must meet cold); use --pattern upfront or steady');
  return n;
}

/** A numeric flag's value (default when absent), checked against lo..hi. Shared by the benches' parsers. */
export function numberFlag(flag: string, raw: string | undefined, def: number, lo: number, hi: number): number {
  if (raw === undefined) return def;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isFinite(n) || n < lo || n > hi) throw new Error(`${flag}: must be a number in ${lo}..${hi} (got "${raw}")`);
  return n;
}

export function parseBenchArgs(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rate: { type: 'string' },
      pattern: { type: 'string', multiple: true, default: [] },
      memory: { type: 'boolean', default: false },
      'window-runs': { type: 'string' },
      rebuilds: { type: 'string' },
      'memory-window': { type: 'string' },
      'burst-ingest-rate': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      'preload-jobs': { type: 'string' },
      seconds: { type: 'string' },
      json: { type: 'boolean', default: false },
      'database-url-admin': { type: 'string', default: process.env.TIMELANE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: process.env.TIMELANE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
      'redis-prefix': { type: 'string', default: 'tl_bench_' },
      worker: { type: 'string', default: 'child' },
      concurrency: { type: 'string' },
      'worker-jit-budget': { type: 'string' },
      batch: { type: 'string' },
      'ingest-parallel': { type: 'string' },
      lead: { type: 'string' },
      grace: { type: 'string' },
      'shard-count': { type: 'string' },
      'daemon-arg': { type: 'string', multiple: true, default: [] },
      profile: { type: 'boolean', default: false },
      budget: { type: 'string' },
      'echo-daemon': { type: 'boolean', default: false },
      'quiet-wait': { type: 'string' },
      'db-set': { type: 'string', multiple: true, default: [] },
      'daemon-cpu-prof': { type: 'string' },
      'daemon-node-options': { type: 'string' },
      'quiet-below': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const worker = values.worker;
  if (worker !== 'inline' && worker !== 'child') throw new Error(`--worker: must be inline or child (got "${worker}")`);
  const patterns = values.pattern.flatMap((p) => p.split(','));
  for (const p of patterns) if (!(PATTERNS as readonly string[]).includes(p)) throw new Error(`--pattern: must be one of ${PATTERNS.join(', ')} (got "${p}")`);
  if (!/^[A-Za-z0-9_.:-]{1,40}$/.test(values['redis-prefix'])) throw new Error('--redis-prefix: 1..40 chars of [A-Za-z0-9_.:-]');
  return {
    rate: values.rate === undefined ? undefined : numberFlag('--rate', values.rate, 0, 1, 100_000),
    patterns: patterns.length ? [...new Set(patterns as Pattern[])] : [...SUITE_PATTERNS],
    memory: values.memory,
    windowRuns: numberFlag('--window-runs', values['window-runs'], 1_000_000, 1_000, 20_000_000),
    rebuilds: numberFlag('--rebuilds', values.rebuilds, 3, 0, 20),
    memoryWindowSeconds: numberFlag('--memory-window', values['memory-window'], 300, 60, 3_600),
    burstIngestRate: numberFlag('--burst-ingest-rate', values['burst-ingest-rate'], 15_000, 100, 1_000_000),
    seconds: numberFlag('--seconds', values.seconds, 15, 1, 600),
    json: values.json,
    adminUrl: values['database-url-admin'],
    redisUrl: values['redis-url'],
    redisPrefix: values['redis-prefix'],
    worker,
    concurrency: numberFlag('--concurrency', values.concurrency, 1000, 1, 10_000),
    workerJitBudget: numberFlag('--worker-jit-budget', values['worker-jit-budget'], 0, 0, 10_000_000),
    batchSize: numberFlag('--batch', values.batch, 1000, 1, 1000),
    ingestParallel: numberFlag('--ingest-parallel', values['ingest-parallel'], 4, 1, 64),
    leadSeconds: numberFlag('--lead', values.lead, 3, 0.5, 120),
    warmupSeconds: values['warmup-seconds'] === undefined ? undefined : numberFlag('--warmup-seconds', values['warmup-seconds'], 0, 0, 60),
    preloadJobs: preloadJobs(values['preload-jobs'], patterns.length ? patterns : [...SUITE_PATTERNS]),
    graceSeconds: numberFlag('--grace', values.grace, 5, 0.5, 120),
    shardCount: numberFlag('--shard-count', values['shard-count'], 64, 1, 65_536),
    daemonArgs: values['daemon-arg'].flatMap((a) => (a.includes('=') && a.startsWith('--') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a])),
    profile: values.profile,
    budgetSeconds: values.budget === undefined ? undefined : numberFlag('--budget', values.budget, 0, 10, 86_400),
    echoDaemon: values['echo-daemon'],
    dbSettings: values['db-set'].map((kv) => {
      const m = /^([a-z_][a-z0-9_.]*)=([A-Za-z0-9_.-]+)$/.exec(kv);
      if (!m) throw new Error(`--db-set: must be name=value with a plain setting name and value (got "${kv}")`);
      return [m[1], m[2]] as [string, string];
    }),
    daemonCpuProf: values['daemon-cpu-prof'],
    daemonNodeOptions: values['daemon-node-options'],
    quietWaitSeconds: numberFlag('--quiet-wait', values['quiet-wait'], 120, 0, 3600),
    quietBelowPct: numberFlag('--quiet-below', values['quiet-below'], 25, 1, 10_000),
  };
}
