/**
 * Small helpers for end-to-end tests: daemons as child processes, workers
 * that record every delivery, polling waits, free ports, gRPC error capture.
 * Everything started here is registered with test/helpers/tracked.ts and
 * unregistered when stopped, so the leak guard catches a test that forgets.
 */
import { OPTION_SPECS } from '../../daemon/config.js';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client as GrpcClient, ServiceError } from '@grpc/grpc-js';
import { DaemonProcess, type DaemonProcessOptions } from '../../ops/local/daemon-process.js';
import {
  createWorker,
  type DeliveredRunInfo,
  openWorkStream,
  type SubscribeOptions,
  TimelaneClient,
  type Worker,
  type WorkerOptions,
  type WorkflowRunInfo,
  type WorkflowRunWithSteps,
  type WorkStream,
} from '@timelane/client';
import { track, untrack } from './tracked.js';

export { sleep };

/** A TCP port that was free a moment ago (bind :0, read it, close). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `cond` every `intervalMs` until it holds (true) or `timeoutMs` passes (false). */
export async function waitUntil(cond: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

// ------------------------------------------------------------- daemons ---

/** Starts a daemon child process and tracks it. Pass `echo: true` to see its log. */
export async function startDaemon(opts: DaemonProcessOptions): Promise<DaemonProcess> {
  // The shared Postgres serves many test files at once: keep each daemon's pool modest.
  const args = opts.args ?? [];
  const pool = args.includes('--database-pool-size') ? [] : ['--database-pool-size', '6'];
  const d = await DaemonProcess.start({ ...opts, args: [...args, ...pool], echo: opts.echo ?? process.env.E2E_ECHO === '1' });
  return track(d, `daemon pid ${d.pid}`);
}

/** SIGTERM (graceful) and untrack. */
export async function stopDaemon(d: DaemonProcess | undefined): Promise<void> {
  if (!d) return;
  await d.stop();
  untrack(d);
}

/** kill -9 and untrack. */
export async function killDaemon(d: DaemonProcess | undefined): Promise<void> {
  if (!d) return;
  await d.kill();
  untrack(d);
}

/** Daemon log lines at warn level or above (pino: 40 warn, 50 error, 60 fatal). */
export function daemonProblems(d: DaemonProcess, minLevel = 50): string[] {
  return d.logs.filter((l) => (l.level ?? 0) >= minLevel).map((l) => JSON.stringify(l));
}

// ------------------------------------------------------------- clients ---

/** Closes a raw grpc-js client that was opened with track(). */
export function closeGrpcClient(c: GrpcClient | undefined): void {
  if (!c) return;
  c.close();
  untrack(c);
}

export function openClient(address: string, timeoutMs = 10_000): TimelaneClient {
  return track(new TimelaneClient(address, { timeoutMs }), `client ${address}`);
}

export function closeClient(c: TimelaneClient | undefined): void {
  if (!c) return;
  c.close();
  untrack(c);
}

/** Opens a raw Work stream (pull mode) and tracks it. */
export function openStream(address: string, subscribe: SubscribeOptions): WorkStream {
  return track(openWorkStream(address, subscribe), `work stream ${address}`);
}

/** Cancels a raw stream (if still open), waits for its end, untracks. */
export async function closeStream(s: WorkStream | undefined, graceful = false): Promise<void> {
  if (!s) return;
  if (graceful) await s.close(2_000);
  else {
    s.cancel();
    await s.finished;
  }
  untrack(s);
}

/** Resolves with the gRPC error a call rejected with; throws if it resolved. */
export async function grpcError(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as ServiceError;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

// ------------------------------------------------------------- workers ---

/** One delivery as the worker saw it. `receivedAt` is the worker's Date.now() when the handler started. */
export interface Receipt {
  run: DeliveredRunInfo;
  receivedAt: number;
}

/** Records every delivery, by run id. */
export class RunRecorder {
  readonly receipts: Receipt[] = [];
  readonly byRun = new Map<string, Receipt[]>();
  private readonly waiters: { check: () => boolean; resolve: () => void }[] = [];

  record(run: DeliveredRunInfo, receivedAt = Date.now()): Receipt {
    const r: Receipt = { run, receivedAt };
    this.receipts.push(r);
    const list = this.byRun.get(run.runId) ?? [];
    list.push(r);
    this.byRun.set(run.runId, list);
    for (const w of [...this.waiters]) {
      if (w.check()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
    return r;
  }

  /** Distinct runs received. */
  get distinct(): number {
    return this.byRun.size;
  }

  /** Run ids received more than once. */
  duplicates(): string[] {
    return [...this.byRun].filter(([, l]) => l.length > 1).map(([id]) => id);
  }

  has(runId: string): boolean {
    return this.byRun.has(runId);
  }

  count(runId: string): number {
    return this.byRun.get(runId)?.length ?? 0;
  }

  /** Resolves true once `cond` holds, false after `timeoutMs`. */
  waitFor(cond: (r: this) => boolean, timeoutMs: number): Promise<boolean> {
    if (cond(this)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = {
        check: () => cond(this),
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Resolves true once every id in `runIds` was received at least once. */
  waitForAll(runIds: Iterable<string>, timeoutMs: number): Promise<boolean> {
    const ids = [...runIds];
    return this.waitFor((r) => ids.every((id) => r.byRun.has(id)), timeoutMs);
  }
}

export interface RecordingWorker {
  worker: Worker;
  recorder: RunRecorder;
  close(): Promise<void>;
}

/**
 * createWorker with a handler that records each delivery (then runs `opts.handler`, if any,
 * whose throw fails the run). Tracked; `close()` closes and untracks.
 */
export function collectRuns(
  opts: Omit<WorkerOptions, 'handler'> & { handler?: WorkerOptions['handler']; recorder?: RunRecorder },
): RecordingWorker {
  const recorder = opts.recorder ?? new RunRecorder();
  const inner = opts.handler;
  const worker = createWorker({
    concurrency: 1000,
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    ...opts,
    handler: async (run, ctx) => {
      recorder.record(run, Date.now());
      // The handler's result is a workflow step's output.
      return inner ? await inner(run, ctx) : undefined;
    },
  });
  track(worker, `worker ${String(opts.address)}`);
  let closed: Promise<void> | undefined;
  return {
    worker,
    recorder,
    close() {
      closed ??= worker.close(3_000).then(() => untrack(worker));
      return closed;
    },
  };
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Percentile (0..100) of a list of numbers (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

/** Waits until the daemon behind `client` reports `count` shards owned here (true) or times out (false). */
export async function waitForOwnedShards(client: TimelaneClient, count: number, timeoutMs = 15_000): Promise<boolean> {
  return waitUntil(async () => {
    try {
      const shards = await client.listShards();
      return shards.filter((s) => s.ownedHere).length >= count;
    } catch {
      return false;
    }
  }, timeoutMs, 100);
}

/**
 * The daemon's default claim-ahead: a run is claimed up to this long before it
 * is due and `fired_at` records its release (the due time), so a run claimed
 * before a kill can show a `fired_at` up to this much after it.
 */
export const CLAIM_AHEAD_MS = Number(OPTION_SPECS.find((s) => s.key === 'claimAheadMs')?.default ?? 0);

/** The built CLI (`npm run build`). */
export const CLI_PATH = fileURLToPath(new URL('../../dist/clients/cli/cli.js', import.meta.url));

export interface CliResult {
  /** Exit code; -1 when it was killed (timeout) or could not start. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI against the daemon at `address`; resolves with its exit code and output, never rejects. */
export function runCli(address: string, args: readonly string[], timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args, '--address', address], { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Polls GetWorkflowRun until the run is in one of `states`; throws with the steps' states if it is not by `timeoutMs`. */
export async function waitForWorkflowState(
  client: TimelaneClient,
  id: string,
  states: readonly WorkflowRunInfo['state'][],
  timeoutMs = 20_000,
): Promise<WorkflowRunWithSteps> {
  let last: WorkflowRunWithSteps | undefined;
  const ok = await waitUntil(
    async () => {
      last = await client.getWorkflowRun(id, { outputs: true });
      return states.includes(last.run.state);
    },
    timeoutMs,
    25,
  );
  if (!ok) throw new Error(`workflow run ${id} is ${last?.run.state}, not ${states.join('/')}: ${JSON.stringify(last?.steps.map((s) => [s.name, s.state]))}`);
  return last as WorkflowRunWithSteps;
}

/** A metric's value in a Prometheus text body: the sum of its series, labelled or not; undefined when it has none. */
export function metricValue(body: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const line of body.split('\n'))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}
