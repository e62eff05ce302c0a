/**
 * The bench's worker: `createWorker` with a handler that only records when
 * each run arrived (it resolves at once, so the run is completed). Runs in
 * the bench process (`inline`) or in a child process (`child`, see
 * worker-child.ts); either way receipts end up in one Receipts table.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWorker, wallNowMs, type Worker } from '@timelane/client';
import { receiptNowMs } from './receipt-clock.js';
import { Receipts } from './receipts.js';
import { onExitKill, type Resources } from './resources.js';

export type WorkerMode = 'inline' | 'child';

export interface BenchWorker {
  readonly receipts: Receipts;
  /** The process the worker runs in. */
  readonly pid: number;
  readonly errors: string[];
  /** Resolves when every receipt seen so far is in `receipts`. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface BenchWorkerOptions {
  mode: WorkerMode;
  address: string;
  queues: string[];
  concurrency: number;
  /** Child only: tuneJitForLatency(n) at its start; 0 = V8's default. */
  jitBudget?: number;
}

export async function startBenchWorker(opts: BenchWorkerOptions, res: Resources): Promise<BenchWorker> {
  const w = opts.mode === 'child' ? await startChild(opts) : startInline(opts);
  res.defer('close worker', () => w.close());
  return w;
}

function startInline(opts: BenchWorkerOptions): BenchWorker {
  const receipts = new Receipts();
  const errors: string[] = [];
  const worker: Worker = createWorker({
    address: opts.address,
    queues: opts.queues,
    concurrency: opts.concurrency,
    workerId: `bench-inline-${process.pid}`,
    handler: (run) => {
      // Arrival was stamped by the client library's clock: move it onto the receipt clock.
      const handled = receiptNowMs();
      receipts.push(Number(run.runId), run.dueAtMs, run.firedAtMs, run.arrivedAtMs + (handled - wallNowMs()), handled);
    },
    onError: (err) => errors.push(err.message),
  });
  return {
    receipts,
    pid: process.pid,
    errors,
    flush: () => Promise.resolve(),
    close: () => worker.close(5_000),
  };
}

type ChildMessage = { t: 'ready' } | { t: 'r'; d: number[] } | { t: 'flushed' } | { t: 'error'; m: string };

async function startChild(opts: BenchWorkerOptions): Promise<BenchWorker> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'worker-child.js');
  const child: ChildProcess = fork(script, [opts.address, opts.queues.join(','), String(opts.concurrency), String(opts.jitBudget ?? 0)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const unregister = onExitKill(() => child.kill('SIGKILL'));
  const receipts = new Receipts();
  const errors: string[] = [];
  let flushWaiters: (() => void)[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    unregister();
    for (const w of flushWaiters.splice(0)) w();
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker child exited (${code}) before it was ready`)));
    child.on('message', (msg: ChildMessage) => {
      if (msg.t === 'ready') resolve();
      else if (msg.t === 'r') receipts.pushFlat(msg.d);
      else if (msg.t === 'flushed') for (const w of flushWaiters.splice(0)) w();
      else if (msg.t === 'error') errors.push(msg.m);
    });
  });
  await ready;
  let closing: Promise<void> | undefined;
  return {
    receipts,
    pid: child.pid ?? 0,
    errors,
    flush: () =>
      child.exitCode !== null || !child.connected
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            flushWaiters.push(resolve);
            child.send({ t: 'flush' });
          }),
    close: () =>
      (closing ??= (async () => {
        if (child.exitCode === null && child.connected) child.send({ t: 'close' });
        const t = setTimeout(() => child.kill('SIGKILL'), 8_000);
        await exited;
        clearTimeout(t);
        flushWaiters = [];
      })()),
  };
}
