/**
 * ReadGate: bounds how many client reads of one kind (ListRuns) run at once,
 * so a read storm holds a bounded share of the API pool and ingest (Schedule)
 * and the other API calls keep connections.
 *
 * Owns a count of running reads and a FIFO of waiting ones. A read is
 * waiting → running → done; or refused at once with RESOURCE_EXHAUSTED when
 * `maxWaiting` reads already wait; or abandoned while waiting when its caller
 * goes away (deadline passed, client cancelled) — it then never starts.
 *
 * Invariants:
 * - at most `maxRunning` reads run at once, at most `maxWaiting` wait;
 * - a finishing read hands its slot straight to the oldest waiter (a newcomer
 *   never overtakes the queue);
 * - an abandoned waiter leaves the queue at once (it holds no slot).
 */
import { TimelaneError } from '../errors.js';

export interface ReadGateOptions {
  /** Named in the refusal, e.g. "ListRuns". */
  what: string;
  /** Reads running at once (each holds one pooled connection). */
  maxRunning: number;
  /** Reads waiting for a slot; one more is refused with RESOURCE_EXHAUSTED. */
  maxWaiting: number;
}

/** Share of the API pool one kind of read may hold. */
const READ_SHARE = 0.5;
/** Waiting reads allowed per running slot: beyond that a caller would mostly wait out its deadline. */
const WAITING_PER_SLOT = 32;

/** Limits for reads served from a pool of `poolSize` connections: half of it, and a queue of 32 per slot. */
export function readGateLimits(poolSize: number): Pick<ReadGateOptions, 'maxRunning' | 'maxWaiting'> {
  const maxRunning = Math.max(1, Math.floor(poolSize * READ_SHARE));
  return { maxRunning, maxWaiting: maxRunning * WAITING_PER_SLOT };
}

interface Waiter {
  start(): void;
  abandon(): void;
}

export class ReadGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly opts: ReadGateOptions) {
    if (!Number.isInteger(opts.maxRunning) || opts.maxRunning < 1) throw new Error(`read gate: maxRunning must be a positive integer (got ${opts.maxRunning})`);
    if (!Number.isInteger(opts.maxWaiting) || opts.maxWaiting < 0) throw new Error(`read gate: maxWaiting must be a non-negative integer (got ${opts.maxWaiting})`);
  }

  /** Reads running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Reads waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `read` once a slot is free. Rejects with RESOURCE_EXHAUSTED when the
   * queue is full, and without running `read` when `signal` aborts first.
   */
  async run<T>(read: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.enter(signal);
    try {
      return await read();
    } finally {
      this.leave();
    }
  }

  private enter(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(abandoned(this.opts.what));
    if (this.running < this.opts.maxRunning && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.opts.maxWaiting) {
      return Promise.reject(
        new TimelaneError(
          'resource_exhausted',
          `${this.opts.what}: ${this.running} running and ${this.waiting.length} waiting (the most this daemon queues); retry with backoff`,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => waiter.abandon();
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        abandon: () => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(abandoned(this.opts.what));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** A read finished: its slot goes to the oldest waiter, if any. */
  private leave(): void {
    const next = this.waiting.shift();
    if (next) next.start();
    else this.running--;
  }
}

function abandoned(what: string): TimelaneError {
  return new TimelaneError('unavailable', `${what}: the caller went away while waiting for a read slot`);
}
