/**
 * Flags of `npm run bench` (bench/fire-lag.ts), parsed with node:util and
 * validated with messages that name the flag and the rule broken.
 */
import { parseArgs } from 'node:util';
import type { WorkerMode } from './workers.js';

export interface BenchOptions {
  /** One rate (runs due per second); undefined runs the suite. */
  rate: number | undefined;
  seconds: number;
  json: boolean;
  adminUrl: string;
  redisUrl: string;
  /** Base of the daemon's Redis key prefix; a random part is always appended. */
  redisPrefix: string;
  worker: WorkerMode;
  concurrency: number;
  batchSize: number;
  ingestParallel: number;
  leadSeconds: number;
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
  /** Before each trial, wait up to this long for the machine to be idle (0: don't). */
  quietWaitSeconds: number;
  /** "Idle": busy under this % of one core. */
  quietBelowPct: number;
}

export const USAGE = `usage: npm run bench -- [flags]

Fire lag of one timelane daemon against real Postgres and Redis: runs due at
a steady rate, received by a gRPC worker; lag = worker receipt - due_at.

  --rate <n>                 runs due per second (default: suite 1000, 5000, and 10000 if 5000 held)
  --seconds <n>              how long runs keep coming due (default 15)
  --json                     print one JSON object per rate; the last line is the last rate's
  --database-url-admin <url> Postgres to create tl_bench_<random> on (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>          Redis for shard leases (default redis://127.0.0.1:6379)
  --redis-prefix <p>         base of the unique key prefix (default tl_bench_)
  --worker <inline|child>    run the worker in the bench process or in a child process (default child)
  --concurrency <n>          worker credit / max in flight (default 1000)
  --batch <n>                runs per ScheduleBatch, 1..1000 (default 1000)
  --ingest-parallel <n>      ScheduleBatch calls in flight (default 4)
  --lead <s>                 seconds between the end of ingest (estimated) and the first due time (default 3)
  --grace <s>                seconds to wait after the last due time (default 5)
  --shard-count <n>          shards of the fresh cluster (default 64)
  --daemon-arg <flag>        extra daemon flag, repeatable (e.g. --daemon-arg=--database-pool-size=32)
  --profile                  enable the daemon's /metrics and report its timer/claim lag and event-loop delay
  --budget <s>               hard limit on the whole run; everything is stopped past it (default 300 per rate)
  --echo-daemon              forward the daemon's log lines
  --db-set <name=value>      ALTER DATABASE <bench db> SET name = value before the daemon starts, repeatable (experiments)
  --daemon-cpu-prof <dir>    write a V8 CPU profile of the daemon (.cpuprofile) into <dir>
  --quiet-wait <s>           before each rate, wait up to this long for the machine to be idle (default 120; 0 = don't)
  --quiet-below <pct>        "idle" = busy under this % of one core (default 25)
  --help`;

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
      seconds: { type: 'string' },
      json: { type: 'boolean', default: false },
      'database-url-admin': { type: 'string', default: process.env.TIMELANE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: process.env.TIMELANE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
      'redis-prefix': { type: 'string', default: 'tl_bench_' },
      worker: { type: 'string', default: 'child' },
      concurrency: { type: 'string' },
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
      'quiet-below': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const worker = values.worker;
  if (worker !== 'inline' && worker !== 'child') throw new Error(`--worker: must be inline or child (got "${worker}")`);
  if (!/^[A-Za-z0-9_.:-]{1,40}$/.test(values['redis-prefix'])) throw new Error('--redis-prefix: 1..40 chars of [A-Za-z0-9_.:-]');
  return {
    rate: values.rate === undefined ? undefined : numberFlag('--rate', values.rate, 0, 1, 100_000),
    seconds: numberFlag('--seconds', values.seconds, 15, 1, 600),
    json: values.json,
    adminUrl: values['database-url-admin'],
    redisUrl: values['redis-url'],
    redisPrefix: values['redis-prefix'],
    worker,
    concurrency: numberFlag('--concurrency', values.concurrency, 1000, 1, 10_000),
    batchSize: numberFlag('--batch', values.batch, 1000, 1, 1000),
    ingestParallel: numberFlag('--ingest-parallel', values['ingest-parallel'], 4, 1, 64),
    leadSeconds: numberFlag('--lead', values.lead, 3, 0.5, 120),
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
    quietWaitSeconds: numberFlag('--quiet-wait', values['quiet-wait'], 120, 0, 3600),
    quietBelowPct: numberFlag('--quiet-below', values['quiet-below'], 25, 1, 10_000),
  };
}
