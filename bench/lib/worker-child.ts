/**
 * The bench's worker in a process of its own (`--worker child`), so that
 * receiving and answering runs does not share an event loop with the bench's
 * bookkeeping. Started by bench/lib/workers.ts with fork().
 *
 * argv: <address> <queues, comma-separated> <concurrency> [<V8 interrupt budget: tuneJitForLatency; 0 = V8's default>]
 * IPC out: {t:'r', d:number[]} receipts (flat, RECEIPT_WIDTH per run) every
 * 50 ms; {t:'flushed'} after a {t:'flush'}; {t:'error', m} on stream errors.
 * IPC in: {t:'flush'} | {t:'close'} (closes the worker and exits).
 * It also exits when the parent goes away (IPC disconnect).
 */
import { createWorker, tuneJitForLatency, wallNowMs } from '@timelane/client';
import { receiptNowMs } from './receipt-clock.js';

type ParentMessage = { t: 'flush' } | { t: 'close' };

const [address, queueList, concurrencyText, jitBudgetText] = process.argv.slice(2);
if (!address || !queueList || !process.send) {
  process.stderr.write('worker-child: started without an address, queues or an IPC channel\n');
  process.exit(2);
}
// --worker-jit-budget: hot code optimised within the first second of a high load (README, TypeScript client).
if (Number(jitBudgetText) > 0) tuneJitForLatency(Number(jitBudgetText));

let pending: number[] = [];
const send = (msg: object): void => {
  if (process.connected) process.send?.(msg);
};
const flush = (): void => {
  if (pending.length === 0) return;
  const d = pending;
  pending = [];
  send({ t: 'r', d });
};

const worker = createWorker({
  address,
  queues: queueList.split(','),
  concurrency: Number(concurrencyText) || 1000,
  workerId: `bench-child-${process.pid}`,
  handler: (run) => {
    // Arrival was stamped by the client library's clock: move it onto the receipt clock.
    const handled = receiptNowMs();
    pending.push(Number(run.runId), run.dueAtMs, run.firedAtMs, run.arrivedAtMs + (handled - wallNowMs()), handled);
  },
  onError: (err) => send({ t: 'error', m: err.message }),
});

const timer = setInterval(flush, 50);

async function close(): Promise<void> {
  clearInterval(timer);
  await worker.close(5_000);
  flush();
  process.disconnect?.();
  process.exit(0);
}

process.on('message', (msg: ParentMessage) => {
  if (msg.t === 'flush') {
    flush();
    send({ t: 'flushed' });
  } else if (msg.t === 'close') void close();
});
process.on('disconnect', () => process.exit(0));
send({ t: 'ready' });
