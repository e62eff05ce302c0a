/**
 * Flags of `npm run bench:peers` (bench/peers.ts), parsed with node:util and
 * validated with messages that name the flag and the rule broken.
 */
import { parseArgs } from 'node:util';
import { numberFlag } from '../args.js';
import { defaultPgbossBatch, PGBOSS_MIN_POLL_SECONDS } from './pgboss.js';
import { SYSTEMS, type SystemName } from './types.js';

export interface PeersOptions {
  rate: number;
  seconds: number;
  json: boolean;
  systems: SystemName[];
  adminUrl: string;
  redisUrl: string;
  leadSeconds: number;
  graceSeconds: number;
  assumedIngestPerS: number;
  chunkSize: number;
  parallel: number;
  quietWaitSeconds: number;
  quietBelowPct: number;
  budgetSeconds: number | undefined;
  timelaneConcurrency: number;
  bullmqConcurrency: number;
  bullmqHz: number;
  pgbossBatch: number;
  pgbossPollSeconds: number;
  graphilePollMs: number;
  graphileConcurrency: number;
  graphileLocalQueue: number;
  echoDaemon: boolean;
}

export const PEERS_USAGE = `usage: npm run bench:peers -- --rate <n> [flags]

The same burst of delayed jobs against timelane, BullMQ (shared Redis, and a
private Redis with --hz 100), pg-boss and graphile-worker, one system after
another; one table of received / lost / duplicates / lag / throughput.

  --rate <n>                 jobs due per second (default 1000)
  --seconds <n>              seconds over which the jobs come due (default 10)
  --json                     the last stdout line is one JSON object keyed by system
  --systems <a,b,…>          subset and order, of: ${SYSTEMS.join(', ')} (default all)
  --database-url-admin <url> Postgres to create the fresh databases on (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>          shared Redis: timelane's leases and the "bullmq" variant (default redis://127.0.0.1:6379)
  --lead <s>                 seconds from the end of scheduling (at the assumed ingest rate) to the first due time (default 3)
  --grace <s>                seconds to wait after the last due time (default 5)
  --assume-ingest <n>        jobs/s every system is assumed to schedule at, to place the first due time (default 5000)
  --chunk <n>                jobs per schedule call, 1..1000 (default 1000)
  --parallel <n>             schedule calls in flight (default 4)
  --quiet-wait <s>           before each system, wait up to this long for the machine to be idle (default 60; 0 = don't)
  --quiet-below <pct>        "idle" = busy under this % of one core (default 25)
  --budget <s>               hard limit on the whole run (default: computed from the flags)
  --timelane-concurrency <n> worker credit (default 1000)
  --bullmq-concurrency <n>   BullMQ Worker concurrency (default 100)
  --bullmq-hz <n>            hz of the private Redis of bullmq_hz100 (default 100)
  --pgboss-batch <n>         pg-boss work() batchSize (default max(100, rate × ${PGBOSS_MIN_POLL_SECONDS} s × 2))
  --pgboss-poll <s>          pg-boss pollingIntervalSeconds (default ${PGBOSS_MIN_POLL_SECONDS}, its minimum)
  --graphile-poll-ms <n>     graphile-worker pollInterval (default 100)
  --graphile-concurrency <n> graphile-worker concurrentJobs (default 24)
  --graphile-local-queue <n> graphile-worker localQueue.size (default 500; -1 = off)
  --echo-daemon              forward timelane's daemon log lines
  --help`;

export function parsePeersArgs(argv: string[]): PeersOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rate: { type: 'string' },
      seconds: { type: 'string' },
      json: { type: 'boolean', default: false },
      systems: { type: 'string' },
      'database-url-admin': { type: 'string', default: process.env.TIMELANE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'redis-url': { type: 'string', default: process.env.TIMELANE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
      lead: { type: 'string' },
      grace: { type: 'string' },
      'assume-ingest': { type: 'string' },
      chunk: { type: 'string' },
      parallel: { type: 'string' },
      'quiet-wait': { type: 'string' },
      'quiet-below': { type: 'string' },
      budget: { type: 'string' },
      'timelane-concurrency': { type: 'string' },
      'bullmq-concurrency': { type: 'string' },
      'bullmq-hz': { type: 'string' },
      'pgboss-batch': { type: 'string' },
      'pgboss-poll': { type: 'string' },
      'graphile-poll-ms': { type: 'string' },
      'graphile-concurrency': { type: 'string' },
      'graphile-local-queue': { type: 'string' },
      'echo-daemon': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const systems: SystemName[] = [];
  for (const s of (values.systems ?? SYSTEMS.join(',')).split(',').map((x) => x.trim()).filter(Boolean)) {
    const known = SYSTEMS.find((k) => k === s);
    if (!known) throw new Error(`--systems: unknown system "${s}" (known: ${SYSTEMS.join(', ')})`);
    if (systems.includes(known)) throw new Error(`--systems: "${s}" named twice`);
    systems.push(known);
  }
  if (systems.length === 0) throw new Error('--systems: name at least one system');
  for (const flag of ['database-url-admin', 'redis-url'] as const) {
    const host = new URL(values[flag]).hostname;
    if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`--${flag}: must point at 127.0.0.1 or localhost (got "${host}")`);
  }
  const rate = numberFlag('--rate', values.rate, 1000, 1, 100_000);
  const localQueue = numberFlag('--graphile-local-queue', values['graphile-local-queue'], 500, -1, 100_000);
  if (localQueue === 0 || localQueue === 1) throw new Error('--graphile-local-queue: must be -1 (off) or at least 2');
  return {
    rate,
    seconds: numberFlag('--seconds', values.seconds, 10, 1, 600),
    json: values.json,
    systems,
    adminUrl: values['database-url-admin'],
    redisUrl: values['redis-url'],
    leadSeconds: numberFlag('--lead', values.lead, 3, 0.5, 120),
    graceSeconds: numberFlag('--grace', values.grace, 5, 0.5, 120),
    assumedIngestPerS: numberFlag('--assume-ingest', values['assume-ingest'], 5000, 100, 1_000_000),
    chunkSize: Math.round(numberFlag('--chunk', values.chunk, 1000, 1, 1000)),
    parallel: Math.round(numberFlag('--parallel', values.parallel, 4, 1, 64)),
    quietWaitSeconds: numberFlag('--quiet-wait', values['quiet-wait'], 60, 0, 3600),
    quietBelowPct: numberFlag('--quiet-below', values['quiet-below'], 25, 1, 10_000),
    budgetSeconds: values.budget === undefined ? undefined : numberFlag('--budget', values.budget, 0, 10, 86_400),
    timelaneConcurrency: Math.round(numberFlag('--timelane-concurrency', values['timelane-concurrency'], 1000, 1, 10_000)),
    bullmqConcurrency: Math.round(numberFlag('--bullmq-concurrency', values['bullmq-concurrency'], 100, 1, 10_000)),
    bullmqHz: Math.round(numberFlag('--bullmq-hz', values['bullmq-hz'], 100, 1, 500)),
    pgbossBatch: Math.round(numberFlag('--pgboss-batch', values['pgboss-batch'], defaultPgbossBatch(rate), 1, 100_000)),
    pgbossPollSeconds: numberFlag('--pgboss-poll', values['pgboss-poll'], PGBOSS_MIN_POLL_SECONDS, PGBOSS_MIN_POLL_SECONDS, 60),
    graphilePollMs: Math.round(numberFlag('--graphile-poll-ms', values['graphile-poll-ms'], 100, 1, 60_000)),
    graphileConcurrency: Math.round(numberFlag('--graphile-concurrency', values['graphile-concurrency'], 24, 1, 1000)),
    graphileLocalQueue: Math.round(localQueue),
    echoDaemon: values['echo-daemon'],
  };
}

/** A time budget that covers every system with room to spare. */
export function defaultBudgetSeconds(o: PeersOptions): number {
  const total = o.rate * o.seconds;
  const perSystem = 60 + total / o.assumedIngestPerS + o.leadSeconds + o.seconds + o.graceSeconds + 60 + o.quietWaitSeconds;
  return Math.ceil(30 + perSystem * o.systems.length);
}
