/**
 * `npm run bench`: fire lag of one timelane daemon (child process) against
 * real Postgres and Redis — runs due at a steady rate, received by a gRPC
 * worker; lag = worker receipt − due_at. See bench/README.md for the flags,
 * what each figure means and the results measured here.
 *
 * Patterns (--pattern, bench/lib/trial.ts): steady (ingest interleaved with
 * firing) and burst (a cold daemon, everything scheduled just before due);
 * upfront (everything scheduled before the first due time) on request.
 * With --rate: that rate only. Without: per pattern, the suite 1000/s,
 * 5000/s, and 10000/s if 5000/s held (nothing lost, p99 < 50 ms). Each rate
 * is a trial on its own database, Redis prefix, daemon and worker, all
 * stopped at its end, on error, on Ctrl-C and past the time budget.
 *
 * --memory: the window trial instead (bench/lib/window-trial.ts): bytes of
 * daemon RSS per in-window run, and the rebuild rate after kill -9.
 *
 * stdout: the report; with --json, one JSON object per rate after it, the
 * last line being the last rate's. Progress goes to stderr.
 */
import { parseBenchArgs, USAGE, type BenchOptions } from './lib/args.js';
import { checkServers } from './lib/infra.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { suiteTable, trialJson, trialText, windowJson, windowText } from './lib/report.js';
import { installStopHandlers } from './lib/resources.js';
import { runTrial, type TrialResult } from './lib/trial.js';
import { runWindowTrial } from './lib/window-trial.js';

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
  const trials = (opts.rate === undefined ? SUITE.length + 1 : 1) * opts.patterns.length;
  installStopHandlers((opts.budgetSeconds ?? (opts.memory ? 900 : 300 * trials)) * 1000);

  await checkServers(opts.adminUrl, opts.redisUrl);
  const machine = await machineInfo(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(machine)}\n`);
  if (opts.memory) {
    const w = await runWindowTrial(opts);
    process.stdout.write(`${windowText(w)}\n`);
    if (opts.json) process.stdout.write(`${windowJson(w, machine)}\n`);
    return 0;
  }

  const results: TrialResult[] = [];
  for (const pattern of opts.patterns) {
    const rates = opts.rate === undefined ? [...SUITE] : [opts.rate];
    for (let i = 0; i < rates.length; i++) {
      const r = await runTrial(opts, rates[i], pattern);
      results.push(r);
      process.stdout.write(`${trialText(r)}\n`);
      if (opts.rate === undefined && rates[i] === SUITE[SUITE.length - 1]) {
        if (held(r)) rates.push(STRETCH);
        else process.stdout.write(`${pattern} ${rates[i]}/s did not hold (lost ${r.lost}, p99 ${r.lag.p99.toFixed(2)} ms): skipping ${STRETCH}/s\n`);
      }
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
