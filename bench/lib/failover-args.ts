/**
 * Flags of `npm run bench:failover` (bench/failover.ts), parsed with
 * node:util and validated with messages that name the flag and the rule.
 */
import { parseArgs } from 'node:util';
import { numberFlag } from './args.js';

export interface FailoverOptions {
  /** Runs due per second, over the whole run. */
  rate: number;
  /** Seconds over which runs come due. */
  seconds: number;
  /** Seconds of steady state before the kill (from the first due time). */
  steadySeconds: number;
  leaseTtlMs: number;
  membershipIntervalMs: number;
  /** Member to kill -9 (or SIGSTOP); 'auto' = the one owning the most shards (ties: b). */
  victim: string;
  /** 'kill': kill -9 the victim; 'stop': SIGSTOP it (frozen, not dead: its record and connections stay until teardown). */
  fault: 'kill' | 'stop';
  /** Planned MoveShard calls in phase 3 (fewer if the run is too short). */
  moves: number;
  /** Seconds between two moves. */
  moveEverySeconds: number;
  shardCount: number;
  /** Delivery lease of the at-least-once runs (a run lost in the crash is redelivered after it). */
  aloLeaseMs: number;
  graceSeconds: number;
  maxDrainSeconds: number;
  leadSeconds: number;
  poolSize: number;
  json: boolean;
  adminUrl: string;
  redisUrl: string;
  daemonArgs: string[];
  budgetSeconds: number;
  echoDaemon: boolean;
  /** Write each daemon's log (JSON lines) into this folder at the end. */
  logsDir: string | undefined;
  /** Before starting, wait up to this long for the machine to be idle (0: don't). */
  quietWaitSeconds: number;
  /** "Idle": busy under this % of one core. */
  quietBelowPct: number;
}

export const FAILOVER_USAGE = `usage: npm run bench:failover -- [flags]

Three timelane daemons (members a, b, c) share the shards through Redis
leases; runs come due at a steady rate (half at-least-once, half
at-most-once), a worker streams from every daemon. Phase 1 steady state,
phase 2 kill -9 of one daemon (takeover gap, lag during takeover), phase 3
planned MoveShard handoffs between the survivors. Counts lost, duplicated,
redelivered and at-most-once-stranded runs. Target for the takeover: every
killed shard fires on a survivor within lease TTL + 200 ms, whatever the
membership period.

Two runs that show the takeover does not depend on the membership period:
  npm run bench:failover -- --lease-ttl-ms 2000
  npm run bench:failover -- --lease-ttl-ms 2000 --membership-interval-ms 3000 --fault stop

  --rate <n>                    runs due per second (default 1000)
  --seconds <n>                 seconds over which runs come due (default 30)
  --steady <s>                  seconds of steady state before the kill (default 10)
  --lease-ttl-ms <ms>           shard lease TTL of the daemons (default 3000)
  --membership-interval-ms <ms> membership heartbeat / assignment period (default 500)
  --victim <id|auto>            member to kill -9 (default auto: most shards, ties b)
  --fault <kill|stop>           kill -9 the victim, or SIGSTOP it (frozen until teardown) (default kill)
  --moves <n>                   planned MoveShard handoffs in phase 3 (default 4)
  --move-every <s>              seconds between two moves (default 2)
  --shard-count <n>             shards of the fresh cluster (default 32)
  --alo-lease-ms <ms>           delivery lease of the at-least-once runs (default 5000)
  --grace <s>                   seconds to wait after the last due time (default 5); past it, waiting goes on
                                while runs still arrive, up to --max-drain
  --max-drain <s>               never wait longer than this after the last due time (default 30; the budget also bounds it)
  --lead <s>                    seconds between the end of ingest (estimated) and the first due time (default 2)
  --pool-size <n>               Postgres pool of each daemon (default 8)
  --json                        the last stdout line is one JSON object with the results
  --database-url-admin <url>    Postgres to create tl_bench_<random> on (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>             Redis for leases and membership (default redis://127.0.0.1:6379)
  --daemon-arg <flag>           extra daemon flag, repeatable (e.g. --daemon-arg=--window-ms=20000)
  --budget <s>                  hard limit on the whole run; everything is stopped past it (default 115)
  --echo-daemon                 forward the daemons' log lines
  --logs <dir>                  write each daemon's log (JSON lines) to <dir>/<member>.jsonl
  --quiet-wait <s>              before starting, wait up to this long for the machine to be idle (default 15; 0 = don't)
  --quiet-below <pct>           "idle" = busy under this % of one core (default 50)
  --help`;

export function parseFailoverArgs(argv: string[]): FailoverOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rate: { type: 'string' },
      seconds: { type: 'string' },
      steady: { type: 'string' },
      'lease-ttl-ms': { type: 'string' },
      'membership-interval-ms': { type: 'string' },
      victim: { type: 'string', default: 'auto' },
      fault: { type: 'string', default: 'kill' },
      moves: { type: 'string' },
      'move-every': { type: 'string' },
      'shard-count': { type: 'string' },
      'alo-lease-ms': { type: 'string' },
      grace: { type: 'string' },
      'max-drain': { type: 'string' },
      lead: { type: 'string' },
      'pool-size': { type: 'string' },
      json: { type: 'boolean', default: false },
      'database-url-admin': { type: 'string', default: process.env.TIMELANE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: process.env.TIMELANE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
      'daemon-arg': { type: 'string', multiple: true, default: [] },
      budget: { type: 'string' },
      'echo-daemon': { type: 'boolean', default: false },
      logs: { type: 'string' },
      'quiet-wait': { type: 'string' },
      'quiet-below': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const victim = values.victim;
  if (!['auto', 'a', 'b', 'c'].includes(victim)) throw new Error(`--victim: must be auto, a, b or c (got "${victim}")`);
  const fault = values.fault;
  if (fault !== 'kill' && fault !== 'stop') throw new Error(`--fault: must be kill or stop (got "${fault}")`);
  const opts: FailoverOptions = {
    rate: numberFlag('--rate', values.rate, 1000, 1, 50_000),
    seconds: numberFlag('--seconds', values.seconds, 30, 10, 300),
    steadySeconds: numberFlag('--steady', values.steady, 10, 2, 300),
    leaseTtlMs: numberFlag('--lease-ttl-ms', values['lease-ttl-ms'], 3000, 300, 60_000),
    membershipIntervalMs: numberFlag('--membership-interval-ms', values['membership-interval-ms'], 500, 50, 10_000),
    victim,
    fault,
    moves: numberFlag('--moves', values.moves, 4, 0, 50),
    moveEverySeconds: numberFlag('--move-every', values['move-every'], 2, 0.5, 60),
    shardCount: numberFlag('--shard-count', values['shard-count'], 32, 3, 4096),
    aloLeaseMs: numberFlag('--alo-lease-ms', values['alo-lease-ms'], 5000, 1000, 60_000),
    graceSeconds: numberFlag('--grace', values.grace, 5, 1, 120),
    maxDrainSeconds: numberFlag('--max-drain', values['max-drain'], 30, 1, 600),
    leadSeconds: numberFlag('--lead', values.lead, 2, 0.5, 60),
    poolSize: numberFlag('--pool-size', values['pool-size'], 8, 2, 100),
    json: values.json,
    adminUrl: values['database-url-admin'],
    redisUrl: values['redis-url'],
    daemonArgs: values['daemon-arg'].flatMap((a) => (a.includes('=') && a.startsWith('--') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a])),
    budgetSeconds: numberFlag('--budget', values.budget, 115, 20, 3600),
    echoDaemon: values['echo-daemon'],
    logsDir: values.logs,
    quietWaitSeconds: numberFlag('--quiet-wait', values['quiet-wait'], 15, 0, 600),
    quietBelowPct: numberFlag('--quiet-below', values['quiet-below'], 50, 1, 10_000),
  };
  const takeoverEnd = opts.steadySeconds + (opts.leaseTtlMs + 2000) / 1000;
  if (takeoverEnd + 1 > opts.seconds) {
    throw new Error(`--seconds ${opts.seconds}: too short for --steady ${opts.steadySeconds} plus the takeover window (lease TTL + 2 s) plus 1 s; use at least ${Math.ceil(takeoverEnd + 1)}`);
  }
  return opts;
}
