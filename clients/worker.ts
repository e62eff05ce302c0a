/**
 * `createWorker`: runs a handler for every run fired on the given queues.
 *
 * With one address the worker talks to that daemon only (sidecar mode); with
 * a list it keeps a stream to every member, so each daemon hands its own
 * shards' fires to it directly. Each address gets its own session
 * (clients/worker-session.ts) with its own credit of `concurrency`.
 *
 * A handler that resolves completes the run; one that throws fails it,
 * retryably unless the error has `retryable === false` (see
 * NonRetryableError), which sends the run to the dead-letter state at once.
 */
import { hostname } from 'node:os';
import type * as grpc from '@grpc/grpc-js';
import { DEFAULT_ADDRESS } from './client.js';
import type { AckInfo } from './types.js';
import { WorkerSession, type RunHandler, type WorkerStats } from './worker-session.js';

export type { RunHandler, WorkerContext, WorkerStats } from './worker-session.js';

/** Throw this (or any error with `retryable = false`) to fail a run without retry. */
export class NonRetryableError extends Error {
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

export interface WorkerOptions {
  /** One daemon (sidecar mode) or every member. Default 127.0.0.1:7070. */
  address?: string | string[];
  /** Queues to receive runs from (1..64). */
  queues: string[];
  /** Most handlers running at once per address; sent as the stream's credit (max_in_flight). Default 10. */
  concurrency?: number;
  handler: RunHandler;
  /** Name shown in daemon logs and GetRun. Default `<hostname>:<pid>`. */
  workerId?: string;
  /** If set, heartbeat every in-flight run this often (ms) while its handler runs. */
  heartbeatEveryMs?: number;
  /** Stream errors (each is followed by a reconnect). Default: ignored. */
  onError?: (err: Error, info: { address: string; runId?: string }) => void;
  /** Every ack the daemons send (answers to Complete, Fail and Heartbeat). */
  onAck?: (ack: AckInfo) => void;
  /** Default: insecure (plaintext). */
  credentials?: grpc.ChannelCredentials;
  /** How long `close()` waits for handlers in flight before aborting them. Default 10,000 ms. */
  closeTimeoutMs?: number;
  /** First reconnect delay; doubles (with jitter) up to `reconnectMaxMs`. Default 100 ms. */
  reconnectInitialMs?: number;
  /** Default 5,000 ms. */
  reconnectMaxMs?: number;
}

export interface Worker {
  /** Live counters, summed over all addresses. */
  readonly stats: WorkerStats;
  /**
   * Stops reconnecting, lets handlers in flight finish and answer (up to
   * `timeoutMs`, default `closeTimeoutMs`), then ends the streams. Idempotent.
   */
  close(timeoutMs?: number): Promise<void>;
}

export function createWorker(options: WorkerOptions): Worker {
  const addresses = validate(options);
  const stats: WorkerStats = { received: 0, completed: 0, failed: 0, rejected: 0 };
  const sessions = addresses.map(
    (address) =>
      new WorkerSession({
        address,
        queues: options.queues,
        concurrency: options.concurrency ?? 10,
        workerId: options.workerId ?? defaultWorkerId(),
        handler: options.handler,
        heartbeatEveryMs: options.heartbeatEveryMs,
        credentials: options.credentials,
        reconnectInitialMs: options.reconnectInitialMs ?? 100,
        reconnectMaxMs: options.reconnectMaxMs ?? 5_000,
        stats,
        onError: options.onError ?? (() => {}),
        onAck: options.onAck,
      }),
  );
  for (const s of sessions) s.start();
  let closing: Promise<void> | undefined;
  return {
    stats,
    close(timeoutMs = options.closeTimeoutMs ?? 10_000): Promise<void> {
      closing ??= Promise.all(sessions.map((s) => s.close(timeoutMs))).then(() => undefined);
      return closing;
    },
  };
}

function validate(options: WorkerOptions): string[] {
  const raw = options.address ?? DEFAULT_ADDRESS;
  const addresses = [...new Set(Array.isArray(raw) ? raw : [raw])];
  if (addresses.length === 0) throw new TypeError('address: give at least one address');
  if (options.queues.length === 0) throw new TypeError('queues: give at least one queue');
  const c = options.concurrency ?? 10;
  if (!Number.isInteger(c) || c < 1 || c > 10_000) throw new RangeError('concurrency: must be an integer in 1..10000');
  const hb = options.heartbeatEveryMs;
  if (hb !== undefined && !(hb > 0)) throw new RangeError('heartbeatEveryMs: must be > 0');
  return addresses;
}

function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}`;
}
