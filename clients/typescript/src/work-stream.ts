/**
 * One `Worker.Work` call: a bidirectional stream to one daemon.
 *
 * States: open (Subscribe sent first, runs and acks flow) → half-closed
 * (`end()`: nothing more is sent; the daemon may still send acks and finish)
 * → finished (the call's status arrived, or `cancel()`). `finished` resolves
 * exactly once with the call's status; nothing is sent after `end()` or once
 * finished.
 *
 * Runs and acks go to the `onRun` / `onAck` listeners; while a kind has no
 * listener its messages are queued for `nextRun()` / `nextAck()` (pull mode,
 * handy in tests that answer with hand-made DeliveryRefs).
 */
import * as grpc from '@grpc/grpc-js';
import { tokenInterceptors } from './credentials.js';
import type { WorkRequest } from '../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkResponse__Output } from '../proto/gen/timelane/v1/WorkResponse.js';
import type { WorkerClient } from '../proto/gen/timelane/v1/Worker.js';
import { wallNowMs } from './clock.js';
import { ackInfo, deliveredRunInfo } from './convert.js';
import { timelaneV1 } from './proto.js';
import type { AckInfo, DeliveredRunInfo, DeliveryRefInfo } from './types.js';
import { TransitFloor } from './staged-runs.js';

export interface SubscribeOptions {
  /** Queues to receive runs from (1..64). */
  queues: string[];
  /** Credit: most runs delivered and unanswered at once (1..10000). Default 10. */
  maxInFlight?: number;
  /** Free-form name for logs and GetRun. */
  workerId?: string;
  /**
   * Staging: take runs up to this many ms before their due time, each with
   * its `startInMs` (0..1000; default 0: runs arrive when due). A run must
   * not start before its startInMs has passed since it arrived (arrivedAtMs),
   * and one not started when the stream ends must be dropped (and reported:
   * Unstarted).
   */
  stageAheadMs?: number;
}

export interface WorkStreamOptions {
  credentials?: grpc.ChannelCredentials;
  /** Bearer token (a daemon with `--auth-file`). */
  token?: string;
}

/** How the call ended: grpc status code (0 = OK) and details. */
export interface StreamEnd {
  code: grpc.status;
  details: string;
  /** The ServiceError for a non-OK status; undefined when OK. */
  error?: grpc.ServiceError;
}

/** The daemon's answer to Subscribe. */
export interface SubscribedInfo {
  /** The daemon (member id) that holds this stream. */
  memberId: string;
  queues: string[];
  maxInFlight: number;
}

/** A run, and when it arrived on this process's monotonic clock (performance.now(): a staged run's startInMs counts from it). */
type RunListener = (run: DeliveredRunInfo, arrivedMono: number) => void;
type AckListener = (ack: AckInfo) => void;

/** Opens a Work stream to `target` (an address, or a Worker client to share) and subscribes. */
export function openWorkStream(
  target: string | WorkerClient,
  subscribe: SubscribeOptions,
  opts: WorkStreamOptions = {},
): WorkStream {
  return new WorkStream(target, subscribe, opts);
}

const WORKER_RECEIVE_WINDOW_BYTES = 16 * 1024 * 1024;

/**
 * A Worker client. `reconnect` bounds grpc-js's own channel backoff (which
 * starts at 1 s) so it does not stack on top of the worker's reconnect loop.
 */
export function newWorkerClient(
  address: string,
  credentials?: grpc.ChannelCredentials,
  reconnect?: { initialMs: number; maxMs: number },
  token?: string,
): WorkerClient {
  const options: grpc.ChannelOptions = {
    // HTTP/2's default 64 KB receive window makes a burst of deliveries wait for
    // window updates from a busy worker: a wider window lets them all arrive.
    'grpc-node.flow_control_window': WORKER_RECEIVE_WINDOW_BYTES,
    // A single run may carry up to the daemon's --max-payload-bytes; runs are batched up to ~1 MiB.
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    ...(reconnect ? { 'grpc.initial_reconnect_backoff_ms': reconnect.initialMs, 'grpc.max_reconnect_backoff_ms': reconnect.maxMs } : {}),
    interceptors: tokenInterceptors(token),
  };
  return new (stampedWorker())(address, credentials ?? grpc.credentials.createInsecure(), options) as unknown as WorkerClient;
}

/**
 * When each Work response began to be decoded (performance.now()): its
 * arrival. Read after the decode, a RunBatch of a few hundred runs would
 * arrive a millisecond or more late, and staged runs' holds (TransitFloor)
 * would carry that into every start.
 */
const arrivals = new WeakMap<object, number>();
let stampedCtor: grpc.ServiceClientConstructor | undefined;

/** The Worker client class, its Work responses stamped with their arrival (arrivals). */
function stampedWorker(): grpc.ServiceClientConstructor {
  if (stampedCtor) return stampedCtor;
  const base = timelaneV1().Worker.service;
  const work = base.Work;
  const responseDeserialize = (bytes: Buffer): WorkResponse__Output => {
    const at = performance.now();
    const msg = work.responseDeserialize(bytes) as WorkResponse__Output;
    arrivals.set(msg, at);
    return msg;
  };
  stampedCtor = grpc.makeClientConstructor({ ...base, Work: { ...work, responseDeserialize } }, 'timelane.v1.Worker');
  return stampedCtor;
}

export class WorkStream {
  /** Resolves once, when the call has ended. */
  readonly finished: Promise<StreamEnd>;
  private readonly call: grpc.ClientDuplexStream<WorkRequest, WorkResponse__Output>;
  private readonly ownedClient: WorkerClient | undefined;
  private readonly runListeners: RunListener[] = [];
  private readonly cancelListeners: ((runId: string, reason: string) => void)[] = [];
  private readonly ackListeners: AckListener[] = [];
  private readonly runs = new Pull<DeliveredRunInfo>();
  private readonly acks = new Pull<AckInfo>();
  private readonly subscribedInfo = new Pull<SubscribedInfo>();
  private halfClosed = false;
  private batching = false;
  private ended: StreamEnd | undefined;
  /** The fastest recent batch transit, for staged runs' holds. */
  private readonly transit = new TransitFloor();
  /** When runs queued for pull (no listener yet) arrived, performance.now(). */
  private readonly queuedArrival = new WeakMap<DeliveredRunInfo, number>();

  constructor(target: string | WorkerClient, subscribe: SubscribeOptions, opts: WorkStreamOptions = {}) {
    this.ownedClient = typeof target === 'string' ? newWorkerClient(target, opts.credentials, undefined, opts.token) : undefined;
    const client = this.ownedClient ?? (target as WorkerClient);
    this.call = client.work();
    let resolveFinished: (end: StreamEnd) => void = () => {};
    this.finished = new Promise((resolve) => (resolveFinished = resolve));
    this.call.on('data', (msg: WorkResponse__Output) => {
      const now = performance.now();
      const at = arrivals.get(msg) ?? now;
      this.dispatch(msg, wallNowMs() - (now - at), at);
    });
    let error: grpc.ServiceError | undefined;
    this.call.on('error', (err: grpc.ServiceError) => (error = err));
    this.call.on('status', (status: grpc.StatusObject) => {
      if (this.ended) return;
      this.ended = { code: status.code, details: status.details, error };
      this.ownedClient?.close();
      const end = this.ended;
      const reason = error ?? new Error(`timelane: Work stream ended: ${status.details || 'OK'}`);
      this.runs.fail(reason);
      this.acks.fail(reason);
      this.subscribedInfo.fail(reason);
      resolveFinished(end);
    });
    this.send({
      subscribe: {
        queues: subscribe.queues,
        maxInFlight: subscribe.maxInFlight ?? 10,
        workerId: subscribe.workerId ?? '',
        batchRuns: true,
        stageAheadMs: subscribe.stageAheadMs ?? 0,
      },
    });
  }

  /** True until `end()`, `cancel()` or the call's end. */
  /** The daemon answered Subscribe (so it also takes CompleteBatch); a daemon from before Subscribed never does. */
  get acceptsBatches(): boolean {
    return this.batching;
  }

  get writable(): boolean {
    return !this.halfClosed && !this.ended;
  }

  /** Sends a raw request. Returns false (and sends nothing) once the stream is no longer writable. */
  send(req: WorkRequest): boolean {
    if (!this.writable) return false;
    this.call.write(req);
    return true;
  }

  complete(ref: DeliveryRefInfo): boolean {
    return this.send({ complete: { ref } });
  }

  /** Completes several deliveries in one message; the daemon answers with one ack per ref. */
  completeMany(refs: DeliveryRefInfo[]): boolean {
    return this.send({ completes: { refs } });
  }

  fail(ref: DeliveryRefInfo, retryable: boolean, message = ''): boolean {
    return this.send({ fail: { ref, retryable, message } });
  }

  heartbeat(ref: DeliveryRefInfo, progress = 0, checkpoint?: Buffer): boolean {
    return this.send({ heartbeat: { ref, progress, checkpoint: checkpoint ?? Buffer.alloc(0) } });
  }

  onRun(listener: RunListener): this {
    this.runListeners.push(listener);
    // A run queued before there was a listener keeps its arrival (a hold counted from later would only end later).
    for (const run of this.runs.drain()) listener(run, this.queuedArrival.get(run) ?? performance.now());
    return this;
  }

  /** The daemon asks the worker to stop a run (CancelJob, or overlap cancel_other). */
  onCancel(listener: (runId: string, reason: string) => void): this {
    this.cancelListeners.push(listener);
    return this;
  }

  onAck(listener: AckListener): this {
    this.ackListeners.push(listener);
    for (const ack of this.acks.drain()) listener(ack);
    return this;
  }

  /** The next run not taken by a listener; rejects with the call's error if it ends first. */
  nextRun(timeoutMs = 10_000): Promise<DeliveredRunInfo> {
    return this.runs.next(timeoutMs, 'run');
  }

  /** The next ack not taken by a listener; rejects with the call's error if it ends first. */
  nextAck(timeoutMs = 10_000): Promise<AckInfo> {
    return this.acks.next(timeoutMs, 'ack');
  }

  /** Half-closes: tells the daemon this side will send nothing more. Acks may still arrive. */
  end(): void {
    if (!this.writable) return;
    this.halfClosed = true;
    this.call.end();
  }

  /** Cancels the call at once (the daemon sees CANCELLED). */
  cancel(): void {
    this.halfClosed = true;
    this.call.cancel();
  }

  /** Half-closes, waits up to `timeoutMs` for the daemon to end the call, then cancels it. */
  async close(timeoutMs = 5_000): Promise<StreamEnd> {
    this.end();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.finished, timedOut]);
    clearTimeout(timer);
    if (!this.ended) this.cancel();
    return this.finished;
  }

  /** Resolves with the daemon's Subscribed answer (the stream is live); rejects if the call ends first. */
  subscribed(timeoutMs = 10_000): Promise<SubscribedInfo> {
    return this.subscribedInfo.next(timeoutMs, 'subscribed').then((s) => {
      this.subscribedInfo.push(s); // keep it for later callers
      return s;
    });
  }

  /** One response: `receivedAtMs` its arrival on the wall clock, `arrivedMono` on the monotonic one. */
  private dispatch(msg: WorkResponse__Output, receivedAtMs: number, arrivedMono: number): void {
    if (msg.runs) {
      const sent = msg.runs.sentMonoMs;
      // Staged runs: their holds leave out how much slower than the fastest lately this batch came.
      const excess = sent > 0 ? this.transit.excess(arrivedMono - sent, arrivedMono) : 0;
      for (const r of msg.runs.runs) {
        // From the arrival: the run is due start_mono_ms − sent_mono_ms after the batch left (less this batch's extra transit).
        const hold = r.startMonoMs > 0 && sent > 0 ? r.startMonoMs - sent - excess : 0;
        this.emitRun(deliveredRunInfo(r, receivedAtMs, Math.max(0, hold)), arrivedMono);
      }
    } else if (msg.run) this.emitRun(deliveredRunInfo(msg.run, receivedAtMs), arrivedMono);
    else if (msg.acks) for (const a of msg.acks.acks) this.emitAck(ackInfo(a));
    else if (msg.ack) this.emitAck(ackInfo(msg.ack));
    else if (msg.cancel) for (const l of this.cancelListeners) l(msg.cancel.ref?.runId ?? '', msg.cancel.reason);
    else if (msg.subscribed) {
      this.batching = true;
      this.subscribedInfo.push({ memberId: msg.subscribed.memberId, queues: msg.subscribed.queues, maxInFlight: msg.subscribed.maxInFlight });
    }
  }

  private emitRun(run: DeliveredRunInfo, arrivedMono: number): void {
    if (this.runListeners.length === 0) {
      this.runs.push(run);
      this.queuedArrival.set(run, arrivedMono);
    }
    for (const l of this.runListeners) l(run, arrivedMono);
  }

  private emitAck(ack: AckInfo): void {
    if (this.ackListeners.length === 0) this.acks.push(ack);
    for (const l of this.ackListeners) l(ack);
  }
}

/** A queue with promise-returning reads; rejects pending and future reads once failed. */
class Pull<T> {
  private readonly items: T[] = [];
  private readonly waiters: { resolve: (v: T) => void; reject: (e: unknown) => void }[] = [];
  private failure: Error | undefined;

  push(item: T): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(item);
    else this.items.push(item);
  }

  drain(): T[] {
    return this.items.splice(0);
  }

  fail(reason: Error): void {
    this.failure = reason;
    for (const w of this.waiters.splice(0)) w.reject(reason);
  }

  next(timeoutMs: number, what: string): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        resolve: (v: T) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`timelane: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}
