/**
 * `npm run bench:peers`: the same burst of delayed jobs against timelane and
 * the systems users would otherwise pick — BullMQ (shared Redis, and a
 * private Redis with --hz 100), pg-boss and graphile-worker — one system
 * after another on this machine, so they never compete for its cores. See
 * bench/README.md ("Side by side with peers") for the scenario, each
 * system's tuning and what each column means.
 *
 * Each system is an adapter (bench/lib/peers/<system>.ts) behind one small
 * interface; the scenario (bench/lib/peers/scenario.ts) is the same code for
 * all. Each system's infrastructure is torn down at its end, on error, on
 * Ctrl-C / SIGTERM and past the time budget.
 *
 * stdout: the machine, the table, CPU, tunings; with --json two more lines,
 * {machine, scenario} and then — the last line — one object keyed by system.
 * Progress goes to stderr.
 */
import { checkServers } from './lib/infra.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { installStopHandlers } from './lib/resources.js';
import { defaultBudgetSeconds, parsePeersArgs, PEERS_USAGE, type PeersOptions } from './lib/peers/args.js';
import { BullmqAdapter } from './lib/peers/bullmq.js';
import { GraphileAdapter } from './lib/peers/graphile.js';
import { PgbossAdapter } from './lib/peers/pgboss.js';
import { contextJson, cpuTable, notes, resultsJson, resultsTable } from './lib/peers/report.js';
import { runScenario, type SystemResult } from './lib/peers/scenario.js';
import { TimelaneAdapter } from './lib/peers/timelane.js';
import type { PeerAdapter, PeerSettings, SystemName } from './lib/peers/types.js';

const log = (msg: string): void => {
  process.stderr.write(`bench:peers: ${msg}\n`);
};

function adapterFor(system: SystemName, o: PeersOptions): PeerAdapter {
  const settings: PeerSettings = { adminUrl: o.adminUrl, redisUrl: o.redisUrl, rate: o.rate, chunkSize: o.chunkSize, parallel: o.parallel, log };
  switch (system) {
    case 'timelane':
      return new TimelaneAdapter(settings, { concurrency: o.timelaneConcurrency, echoDaemon: o.echoDaemon });
    case 'bullmq':
      return new BullmqAdapter('bullmq', settings, { concurrency: o.bullmqConcurrency, privateHz: undefined });
    case 'bullmq_hz100':
      return new BullmqAdapter('bullmq_hz100', settings, { concurrency: o.bullmqConcurrency, privateHz: o.bullmqHz });
    case 'pgboss':
      return new PgbossAdapter(settings, { batchSize: o.pgbossBatch, pollSeconds: o.pgbossPollSeconds });
    case 'graphile':
      return new GraphileAdapter(settings, { pollIntervalMs: o.graphilePollMs, concurrentJobs: o.graphileConcurrency, localQueueSize: o.graphileLocalQueue });
  }
}

async function main(): Promise<number> {
  let opts: PeersOptions | 'help';
  try {
    opts = parsePeersArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench:peers: ${(err as Error).message}\n\n${PEERS_USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${PEERS_USAGE}\n`);
    return 0;
  }
  const budget = opts.budgetSeconds ?? defaultBudgetSeconds(opts);
  installStopHandlers(budget * 1000);
  // The stop handlers tear everything down and exit; meanwhile the scenario must not go on (nor report).
  let stopping = false;
  process.once('SIGINT', () => (stopping = true));
  process.once('SIGTERM', () => (stopping = true));
  setTimeout(() => (stopping = true), budget * 1000).unref();

  await checkServers(opts.adminUrl, opts.redisUrl);
  const machine = await machineInfo(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(machine)}\n`);
  const scenario = {
    rate: opts.rate,
    seconds: opts.seconds,
    jobs: opts.rate * opts.seconds,
    lead_s: opts.leadSeconds,
    grace_s: opts.graceSeconds,
    assumed_ingest_per_s: opts.assumedIngestPerS,
    chunk: opts.chunkSize,
    parallel: opts.parallel,
    systems: opts.systems,
  };
  process.stdout.write(
    `burst: ${scenario.jobs} delayed jobs per system (${opts.rate}/s due over ${opts.seconds} s), scheduled just before, first due ≥ ${opts.leadSeconds} s after the last schedule call; grace ${opts.graceSeconds} s; systems run one after another\n`,
  );

  const results: SystemResult[] = [];
  for (const system of opts.systems) {
    const r = await runScenario(adapterFor(system, opts), {
      rate: opts.rate,
      seconds: opts.seconds,
      leadSeconds: opts.leadSeconds,
      graceSeconds: opts.graceSeconds,
      assumedIngestPerS: opts.assumedIngestPerS,
      quietWaitSeconds: opts.quietWaitSeconds,
      quietBelowPct: opts.quietBelowPct,
      log,
      stopRequested: () => stopping,
    });
    // Let the stop handler finish the teardown and exit (130 / 143 / 3).
    if (stopping) await new Promise<never>(() => undefined);
    results.push(r);
    log(`${system}: received ${r.received}/${r.scheduled}, lag p50 ${r.lag.p50.toFixed(2)} / p99 ${r.lag.p99.toFixed(2)} ms${r.error ? `; FAILED: ${r.error}` : ''}`);
  }

  process.stdout.write(`\n${resultsTable(results)}\n\nCPU over the fire phase (% of one core):\n${cpuTable(results)}\n\n${notes(results)}\n`);
  if (opts.json) process.stdout.write(`${contextJson(machine, scenario)}\n${resultsJson(results)}\n`);
  return results.some((r) => r.error) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:peers: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    // Each system's teardown ran in its scenario's finally; the exit hook SIGKILLs any child left.
    process.exit(1);
  },
);
