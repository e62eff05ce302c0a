/**
 * `npm run bench`: fire lag of one timelane daemon (child process) against
 * real Postgres and Redis — runs due at a steady rate, received by a gRPC
 * worker; lag = worker receipt − due_at. See bench/README.md for the flags,
 * what each figure means and the results measured here.
 *
 * With --rate: that rate only. Without: the suite 1000/s, 5000/s, and
 * 10000/s if 5000/s held (nothing lost, p99 < 50 ms). Each rate is a trial on
 * its own database, Redis prefix, daemon and worker (bench/lib/trial.ts),
 * all stopped at its end, on error, on Ctrl-C and past the time budget.
 *
 * stdout: the report; with --json, one JSON object per rate after it, the
 * last line being the last rate's. Progress goes to stderr.
 */
import { parseBenchArgs, USAGE, type BenchOptions } from './lib/args.js';
import { checkServers } from './lib/infra.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { suiteTable, trialJson, trialText } from './lib/report.js';
import { installStopHandlers } from './lib/resources.js';
import { runTrial, type TrialResult } from './lib/trial.js';

const SUITE = [1000, 5000];
const STRETCH = 10_000;
const HELD_P99_MS = 50;

function held(r: TrialResult): boolean {
  return r.lost === 0 && r.lag.p99 < HELD_P99_MS;
}

async function main(): Promise<number> {
  let opts: BenchOptions | 'help';
  try {
    opts = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const trials = opts.rate === undefined ? SUITE.length + 1 : 1;
  installStopHandlers((opts.budgetSeconds ?? 300 * trials) * 1000);

  await checkServers(opts.adminUrl, opts.redisUrl);
  const machine = await machineInfo(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(machine)}\n`);

  const results: TrialResult[] = [];
  const rates = opts.rate === undefined ? [...SUITE] : [opts.rate];
  for (let i = 0; i < rates.length; i++) {
    const r = await runTrial(opts, rates[i]);
    results.push(r);
    process.stdout.write(`${trialText(r)}\n`);
    if (opts.rate === undefined && rates[i] === SUITE[SUITE.length - 1]) {
      if (held(r)) rates.push(STRETCH);
      else process.stdout.write(`${rates[i]}/s did not hold (lost ${r.lost}, p99 ${r.lag.p99.toFixed(2)} ms): skipping ${STRETCH}/s\n`);
    }
  }
  if (results.length > 1) process.stdout.write(`\n${suiteTable(results)}\n`);
  if (opts.json) for (const r of results) process.stdout.write(`${trialJson(r, machine)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    // Resources were closed by the trial's finally; the exit hook SIGKILLs any child left.
    process.exit(1);
  },
);
