/**
 * `timelane worker`: prints each run as it fires and completes it (a demo and
 * smoke-test worker). `--discover` (the cluster default) follows the member
 * list; otherwise one stream per --address (sidecar: one localhost address).
 */
import { connectionFromEnv, createWorker } from '@timelane/client';
import { type Command, Option } from 'commander';
import { collect, connectionOptions, type ConnectionOptions, durationArg, fail, intArg, out, rateArg } from './cli-common.js';
import { clip, errorLine, payloadText, toJson } from './format.js';
import type { DeliveredRunInfo } from '@timelane/client';

interface WorkerCommandOptions extends ConnectionOptions {
  queue: string[];
  concurrency: number;
  failRate: number;
  discover?: boolean;
  discoverEvery: number;
}

export function registerWorkerCommand(program: Command): void {
  connectionOptions(program.command('worker'))
    .description('receive runs, print one line per run as it fires, and complete it (until Ctrl-C)')
    .requiredOption('--queue <queue>', 'queue to receive from (repeat for more)', collect)
    .option('--concurrency <n>', 'runs in flight per daemon', intArg, 10)
    .option('--fail-rate <0..1>', 'fail this share of runs, for demos', rateArg, 0)
    .option('--discover', 'treat --address as seeds: stream from every live cluster member, following joins and leaves')
    .addOption(
      new Option('--discover-every <duration>', 'with --discover: refresh the member list this often').argParser(durationArg).default(2_000, '2s'),
    )
    .addHelpText(
      'after',
      [
        '',
        'Each daemon delivers only the fires of the shards it owns, so in a cluster a worker',
        'needs a stream to every member:',
        '  timelane worker --discover --address seed-host:7070 --queue emails   (cluster: recommended)',
        '  timelane worker --address 127.0.0.1:7070 --queue emails               (sidecar: its own daemon)',
        'Without --discover, a comma-separated --address list keeps a stream to each address given.',
      ].join('\n'),
    )
    .action((opts: WorkerCommandOptions) => runWorker(opts));
}

function runWorker(opts: WorkerCommandOptions): Promise<void> {
  const lastError = new Map<string, string>();
  let worker: ReturnType<typeof createWorker>;
  try {
    worker = createWorker({
      ...connectionFromEnv(),
      address: opts.address.split(',').map((a) => a.trim()).filter(Boolean),
      discover: opts.discover,
      discoverEveryMs: opts.discoverEvery,
      onAddresses: (addresses) => process.stderr.write(`streaming from ${addresses.length ? addresses.join(', ') : 'no daemon'}\n`),
      queues: opts.queue,
      concurrency: opts.concurrency,
      handler: (run) => {
        const failing = opts.failRate > 0 && Math.random() < opts.failRate;
        out(opts.json ? toJson({ ...run, failing }) : runLine(run, failing));
        if (failing) throw new Error(`simulated failure (--fail-rate ${opts.failRate})`);
      },
      onError: (err, { address, discovery }) => {
        const line = errorLine(err);
        if (lastError.get(address) === line) return;
        lastError.set(address, line);
        process.stderr.write(discovery ? `member discovery: ${line} (keeping the current streams)\n` : `${address}: ${line} (reconnecting)\n`);
      },
      onAck: (ack) => {
        if (ack.code !== 0) process.stderr.write(`run ${ack.runId}: rejected: ${ack.codeName}: ${ack.message}\n`);
      },
    });
  } catch (err) {
    fail(err);
  }
  const via = opts.discover ? `the members found via ${opts.address}` : opts.address;
  process.stderr.write(`worker on ${opts.queue.join(', ')} via ${via}; Ctrl-C to stop\n`);
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        process.stderr.write(`${signal} again: exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      process.stderr.write(`${signal}: finishing runs in flight…\n`);
      void worker.close().then(() => {
        const s = worker.stats;
        process.stderr.write(`received ${s.received}, completed ${s.completed}, failed ${s.failed}, rejected ${s.rejected}\n`);
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function runLine(run: DeliveredRunInfo, failing: boolean): string {
  const when = new Date(run.receivedAtMs).toISOString();
  const payload = run.payload.length ? clip(payloadText(run.payload)) : '-';
  const tail = failing ? '  -> fail' : '';
  return `${when}  ${run.queue}  run ${run.runId}  attempt ${run.attempt}  ${payload}  lag ${run.lagMs.toFixed(1)} ms${tail}`;
}
