/**
 * A worker's connection to one daemon: keeps one Work stream open, runs the
 * handler for each delivered run, answers it, and reconnects with backoff.
 *
 * States: connecting/open (a WorkStream exists) → waiting (stream ended,
 * reconnect timer armed) → back to open; any state → closing → closed.
 *
 * Invariants:
 * - At most `concurrency` handlers run at once; runs beyond that (possible
 *   only after a reconnect, while handlers from the old stream still run)
 *   wait in `backlog` in arrival order. A run cancelled there never runs.
 * - A staged run (handed over ahead of its due time, `startInMs` > 0) is
 *   held in `staged` and starts no earlier than its startInMs after it
 *   arrived (staged-runs.ts); it counts against the stream's credit
 *   meanwhile. One cancelled while held never runs (answered as cancelled);
 *   one whose stream ends while held is dropped (the daemon hands it out
 *   again: it stages at-least-once runs only) and reported (Unstarted); a
 *   newer delivery of a held run replaces it.
 * - Every run handed to the handler gets exactly one answer (Complete or
 *   Fail) echoing its DeliveryRef. An answer produced while this session's
 *   stream is not writable goes out on another session's stream if the
 *   worker has one (`forward`), else waits in `outbox` and is sent first
 *   thing on the next stream; the daemon judges it by the ref alone (a
 *   superseded ref is rejected), so any member may take it. Answers are
 *   never forwarded while this session's own stream is open: the daemon
 *   frees the stream's credit only for answers that come back on it.
 * - An answer written to a stream stays in `unacked` until the daemon acks
 *   it. A stream that ends first (its daemon was killed: the write went
 *   nowhere) has its unacked answers sent again, on another session's stream
 *   or the next one — else the run would be delivered again after its lease
 *   and its handler run twice. A repeat the daemon already recorded is
 *   simply rejected.
 * - An answer acked UNAVAILABLE (the daemon could not record it: its
 *   Postgres is away) is sent again after a growing pause, up to
 *   MAX_ANSWER_RESENDS times — else the run would be delivered again after
 *   its lease although its handler is done.
 * - A FAILED_PRECONDITION ack (superseded) aborts this session's
 *   deliveries of the run no newer than the one the refused request was for
 *   (never the run's newer delivery running here). An ack names only the
 *   run: a refusal is credited to its unacked Complete or Fail, else to its
 *   oldest heartbeat out; an acceptance to its newest heartbeat. One that answers a request
 *   forwarded from another session, or a resent answer, aborts nothing here
 *   (the delivery it refers to is not one still running here).
 * - On close, the daemon is first told to send no more runs (Drain); the
 *   stream is half-closed only once nothing is in flight (after that no
 *   answer could be sent); runs still unfinished at the timeout are aborted
 *   (their signal fires) and the call is cancelled. Answers still waiting
 *   for a stream (their daemon was restarting), or acked UNAVAILABLE while
 *   closing, are sent again within the timeout — on a stream opened for
 *   them on the queue that never has runs (NO_RUNS_QUEUE), which is handed
 *   no run.
 */
import type * as grpc from '@grpc/grpc-js';
import type { WorkRequest } from '../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkerClient } from '../proto/gen/timelane/v1/Worker.js';
import type { AckInfo, DeliveredRunInfo, DeliveryRefInfo } from './types.js';
import { WorkStream, newWorkerClient, type StreamEnd } from './work-stream.js';
import { traceRun } from './tracing.js';
import { RunAbort } from './run-abort.js';
import { StagedRuns } from './staged-runs.js';
import { wallNowMs } from './clock.js';

/** A queue the daemon never schedules a run on (it refuses Schedule there): a closing worker's answers-only stream subscribes to it. */
const NO_RUNS_QUEUE = 'timelane:none';

export interface WorkerContext {
  /**
   * Extends the run's lease (at-least-once) and reports progress (0..1) and a
   * checkpoint (≤ 64 KiB). Throws a RangeError (sending nothing) for a
   * progress outside 0..1 or a larger checkpoint: the daemon would refuse the
   * heartbeat and extend nothing. (Called from a timer or an event callback,
   * the throw is uncaught there: check a computed progress first.)
   */
  heartbeat(progress?: number | null, checkpoint?: Buffer | Uint8Array | null): void;
  /**
   * Aborted when the run is cancelled while it runs (CancelJob, or its
   * recurring job's cancel_other policy: the reason is a CancelledError), when
   * this delivery was superseded (the daemon rejected it), or when the worker
   * is closing past its timeout. A handler that stops on a cancel may throw:
   * the run ends cancelled (not retried, not dead).
   */
  signal: AbortSignal;
}

/** The reason of a handler's signal when the daemon cancelled its run. */
export class CancelledError extends Error {
  constructor(readonly runId: string, reason: string) {
    super(`timelane: run ${runId} cancelled${reason ? `: ${reason}` : ''}`);
    this.name = 'CancelledError';
  }
}

/**
 * Runs one delivery. Resolving completes the run; throwing fails it. A
 * workflow step may resolve with an output (a Buffer, a string, or anything
 * JSON-serialisable; at most 64 KiB encoded): its children receive it in
 * `run.workflow.parentOutputs`. Other runs' outputs are ignored.
 */
export type RunHandler = (run: DeliveredRunInfo, ctx: WorkerContext) => Promise<unknown> | unknown;

/** Largest output a Complete may carry (the daemon refuses more). */
export const MAX_OUTPUT_BYTES = 65_536;

export interface WorkerStats {
  /** Runs delivered to this worker. */
  received: number;
  /** Handlers that resolved (answered Complete). */
  completed: number;
  /** Handlers that threw (answered Fail). */
  failed: number;
  /** Acks with a non-OK code (e.g. FAILED_PRECONDITION for a superseded delivery). */
  rejected: number;
}

export interface SessionOptions {
  address: string;
  queues: string[];
  concurrency: number;
  /** Take runs this many ms ahead of due and hold them until due (Subscribe.stage_ahead_ms); 0: none. */
  stageAheadMs: number;
  workerId: string;
  handler: RunHandler;
  heartbeatEveryMs: number | undefined;
  credentials: grpc.ChannelCredentials | undefined;
  token: string | undefined;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
  stats: WorkerStats;
  onError: (err: Error, info: { address: string; runId?: string }) => void;
  onAck: ((ack: AckInfo) => void) | undefined;
  /** Every end of a stream while not closing (the worker refreshes its member list). */
  onStreamEnd?: (end: StreamEnd) => void;
  /** Sends an answer on some other open stream; false if there is none. */
  forward?: (req: WorkRequest) => boolean;
}

interface Active {
  run: DeliveredRunInfo;
  abort: RunAbort;
  /** Its heartbeatEveryMs timer: cleared when the handler settles, or when the session gives up on it. */
  beat?: NodeJS.Timeout;
}

/**
 * The context a handler gets. `signal` is made when first read (RunAbort); a
 * handler may still assign its own (say, combined with a timeout): it then
 * reads back what it assigned, as with a plain property.
 */
export function handlerContext(heartbeat: WorkerContext['heartbeat'], abort: RunAbort): WorkerContext {
  return {
    heartbeat,
    get signal(): AbortSignal {
      return abort.signal;
    },
    set signal(value: AbortSignal) {
      Object.defineProperty(this, 'signal', { value, writable: true, enumerable: true, configurable: true });
    },
  };
}

const STABLE_AFTER_MS = 5_000;
/** Completes wait at most this long for others to go with them (queueComplete). */
const COMPLETE_GATHER_MS = 4;
/** gRPC status 14: the daemon is up but could not record the answer (its storage is away). */
const UNAVAILABLE = 14;
const MAX_FAIL_MESSAGE = 4096;
/** The daemon's bound on a heartbeat's checkpoint. */
const MAX_CHECKPOINT_BYTES = 65_536;
const FORWARD_MEMORY_MS = 60_000;
/** An answer acked UNAVAILABLE is sent again after 250 ms, doubling to 4 s: about a minute in all. */
const ANSWER_RESEND_MS = 250;
const ANSWER_RESEND_MAX_MS = 4_000;
const MAX_ANSWER_RESENDS = 18;
/** Closing with answers that found no stream: how often to try a daemon again. */
const CLOSE_RETRY_MS = 200;

export class WorkerSession {
  private readonly client: WorkerClient;
  private stream: WorkStream | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closing = false;
  private closed: Promise<void> | undefined;
  /** Closed past its timeout: answers of aborted handlers are dropped (the daemon redelivers; no attempt is spent). */
  private abandoned = false;
  private readonly active = new Set<Active>();
  private readonly backlog: DeliveredRunInfo[] = [];
  /** Runs handed over ahead of their due time (staging), held until they may start. */
  private readonly staged = new StagedRuns<WorkStream>((run) => this.release(run));
  private readonly outbox: WorkRequest[] = [];
  /** Answers written to the current stream and not acked yet, by run id (one Complete or Fail each). */
  private unacked = new Map<string, WorkRequest>();
  /**
   * Heartbeats written to the current stream and not acked yet: their
   * deliveries, by run id. An ack names only the run: one that accepts a
   * heartbeat is the newest delivery's (only the current delivery's is
   * accepted), one that refuses it the oldest's; while a heartbeat of the run
   * is out, an ack counts against it first, except a refusal while the run's
   * Complete or Fail is unacked (that answer's; see acked).
   */
  private beatsOut = new Map<string, DeliveryRefInfo[]>();
  /** Completes gathered to be sent together (see queueComplete), and the timer that sends them. */
  private readonly completes: DeliveryRefInfo[] = [];
  private completeTimer: NodeJS.Timeout | undefined;
  /** Run id → requests other sessions sent on our stream whose rejection is still unseen, and when the last was sent. */
  private readonly forwarded = new Map<string, { count: number; atMs: number }>();
  private idleWaiters: (() => void)[] = [];
  /** Closing: waiting for the answers written to be acked (ackedAll). */
  private ackWaiters: (() => void)[] = [];
  /** Closed: the client is closed; nothing is kept for a next stream. */
  private finished = false;
  /** Run id → times its answer was sent again after an UNAVAILABLE ack; the timers of pending resends. */
  private readonly resends = new Map<string, number>();
  private readonly resendTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: SessionOptions) {
    this.client = newWorkerClient(opts.address, opts.credentials, { initialMs: opts.reconnectInitialMs, maxMs: opts.reconnectMaxMs }, opts.token);
  }

  get address(): string {
    return this.opts.address;
  }

  start(): void {
    this.connect();
  }

  /** Sends another session's request on this session's open stream; false when it has none. */
  forwardHere(req: WorkRequest): boolean {
    if (!this.stream?.send(req)) return false;
    this.awaitAck(req);
    const single = (req.complete ?? req.fail ?? req.heartbeat)?.ref?.runId;
    const runIds = single ? [single] : (req.completes?.refs ?? []).map((r) => r.runId ?? '');
    const now = Date.now();
    // OK acks are not matched up (they may answer our own request), so forget old entries.
    if (runIds.length > 0) for (const [id, f] of this.forwarded) if (now - f.atMs > FORWARD_MEMORY_MS) this.forwarded.delete(id);
    for (const runId of runIds) {
      if (!runId) continue;
      const f = this.forwarded.get(runId);
      this.forwarded.set(runId, { count: (f?.count ?? 0) + 1, atMs: now });
    }
    return true;
  }

  /** Idempotent: a second call returns the first call's promise. */
  close(timeoutMs: number): Promise<void> {
    this.closed ??= this.shutdown(timeoutMs);
    return this.closed;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.closing = true;
    this.flushCompletes();
    const deadline = Date.now() + timeoutMs;
    clearTimeout(this.reconnectTimer);
    // Not waited for: the daemon redelivers a run whose answer it never recorded.
    for (const t of this.resendTimers) clearTimeout(t);
    // No more runs: else each answer freed credit for a new run, and a busy
    // worker never became idle (close aborted its handlers at the timeout and
    // their runs were redelivered). Runs already on the way are still run.
    // Only to a daemon that answered Subscribe (older ones know neither; a
    // close before Subscribed arrived sends none).
    if (this.stream?.acceptsBatches) this.stream.send({ drain: {} });
    const started = Date.now();
    const idle = await this.waitIdle(timeoutMs);
    const stream = this.stream;
    if (!idle) {
      this.abandoned = true;
      for (const a of this.active) {
        // A handler that ignores its signal must not keep the process alive through its heartbeat timer.
        clearInterval(a.beat);
        a.abort.abort(new Error('timelane: worker closed before the handler finished'));
      }
      this.backlog.length = 0;
      this.staged.clear();
      stream?.cancel();
    } else {
      // Answers that found no stream (its daemon restarting): open one to send them
      // in the time left, else their runs are handed out again and run twice.
      await this.sendWaitingAnswers(deadline);
      if (this.stream) await this.stream.close(Math.max(0, timeoutMs - (Date.now() - started)));
    }
    this.finished = true;
    clearTimeout(this.reconnectTimer);
    this.client.close();
  }

  /**
   * While closing, with every handler done: until the answers written or
   * waiting in the outbox are acked, or `deadline`, connect (every
   * CLOSE_RETRY_MS while the daemon is away) and send them. A stream opened
   * here subscribes to NO_RUNS_QUEUE only (see connect): it is handed no run.
   */
  private async sendWaitingAnswers(deadline: number): Promise<void> {
    const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, Math.min(ms, deadline - Date.now()))));
    try {
      while (this.outbox.length > 0 || (this.unacked.size > 0 && this.stream?.writable)) {
        const left = deadline - Date.now();
        if (left <= 0) return;
        if (!this.stream) this.connect();
        else if (this.outbox.length > 0) {
          // Answers acked UNAVAILABLE meanwhile (see acked): again, after a pause.
          await pause(CLOSE_RETRY_MS);
          const open = this.stream;
          if (open) {
            for (const req of this.outbox.splice(0)) {
              if (open.send(req)) this.awaitAck(req);
              else this.outbox.push(req); // the stream just ended: it waits for the next one
            }
          }
          continue;
        }
        const stream = this.stream!;
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          this.ackedAll().then(() => true),
          stream.finished.then(() => false),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), left))),
        ]);
        clearTimeout(timer); // (else it held the process for the whole timeout after a close that ended at once)
        if (settled && this.outbox.length === 0) return;
        if (this.stream === undefined) await pause(CLOSE_RETRY_MS);
      }
    } finally {
      this.ackWaiters = [];
    }
  }

  /** Resolves once no answer written to the stream awaits its ack (or, closing, waits to be sent again). */
  private ackedAll(): Promise<void> {
    if (this.unacked.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.ackWaiters.push(resolve));
  }

  private connect(): void {
    const { queues, concurrency, workerId } = this.opts;
    // Opened while closing, only to send answers: on the queue that never has runs (the daemon judges
    // answers by their refs). On the worker's queues it could be handed a run it would not start — and an
    // at-most-once run, never handed out again, would be lost.
    const late = this.closing;
    const stream = new WorkStream(
      this.client,
      late ? { queues: [NO_RUNS_QUEUE], maxInFlight: 1, workerId } : { queues, maxInFlight: concurrency, workerId, stageAheadMs: this.opts.stageAheadMs },
    );
    this.stream = stream;
    const openedAt = Date.now();
    let heard = false;
    stream.onRun((run, arrivedMono) => {
      heard = true;
      this.accept(run, stream, arrivedMono);
    });
    stream.onAck((ack) => {
      heard = true;
      this.acked(ack);
    });
    stream.onCancel((runId, reason) => this.cancelled(runId, reason));
    for (const req of this.outbox.splice(0)) if (stream.send(req)) this.awaitAck(req);
    void stream.finished.then((end) => this.ended(stream, end, heard || Date.now() - openedAt >= STABLE_AFTER_MS));
  }

  private ended(stream: WorkStream, end: StreamEnd, stable: boolean): void {
    // Staged runs it brought that have not started: the daemon hands them out
    // again (to this worker or another), so they must not start here too.
    const dropped = this.staged.dropFrom(stream);
    const current = stream === this.stream;
    if (current) {
      this.stream = undefined;
      // Answers the daemon never acked may never have reached it: send them again.
      const lost = [...this.unacked.values()];
      this.unacked = new Map();
      this.beatsOut = new Map();
      for (const req of lost) this.send(req, true);
    }
    if (dropped.length > 0) {
      // Any member ends their leases: if their daemon died, they go out again at once, not at the lease's end.
      this.send({ unstarted: { refs: dropped.map((r) => r.ref) } }, true);
      this.checkIdle();
    }
    if (!current) return;
    if (this.closing) return; // (shutdown reconnects itself while answers wait)
    if (end.error) this.opts.onError(end.error, { address: this.opts.address });
    this.opts.onStreamEnd?.(end);
    if (stable) this.failures = 0;
    const ceiling = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectInitialMs * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 30);
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private accept(run: DeliveredRunInfo, stream: WorkStream, arrivedMono: number): void {
    this.opts.stats.received++;
    // Half-closed while closing: no answer could be sent; the daemon redelivers it.
    if (this.closing && !stream.writable) return;
    // A newer delivery of a run held here (its lease ran out while it waited): the older copy never starts.
    this.staged.take(run.runId);
    if (run.startInMs > 0) this.staged.add(run, stream, arrivedMono);
    else this.release(run);
  }

  /** A run may start now: its handler runs if a slot is free, else it waits in the backlog. */
  private release(run: DeliveredRunInfo): void {
    if (run.startInMs > 0) {
      // Staged: it reaches its handler now, not when it arrived.
      run.receivedAtMs = wallNowMs();
      run.lagMs = run.receivedAtMs - run.dueAtMs;
    }
    if (this.active.size < this.opts.concurrency) void this.execute(run);
    else this.backlog.push(run);
  }

  /**
   * The daemon cancelled a run: a running handler's signal aborts; one still
   * waiting in the backlog never runs, and is answered as a handler that
   * stopped on the cancel would be (a Fail, not retryable: it ends cancelled).
   */
  private cancelled(runId: string, reason: string): void {
    for (const a of this.active) if (a.run.runId === runId) a.abort.abort(new CancelledError(runId, reason));
    const held = this.staged.take(runId);
    if (held) {
      this.send({ fail: { ref: held.ref, retryable: false, message: new CancelledError(runId, reason).message } }, true);
      this.checkIdle();
    }
    for (let i = this.backlog.length - 1; i >= 0; i--) {
      const run = this.backlog[i];
      if (run.runId !== runId) continue;
      this.backlog.splice(i, 1);
      this.send({ fail: { ref: run.ref, retryable: false, message: new CancelledError(runId, reason).message } }, true);
    }
  }

  private async execute(run: DeliveredRunInfo): Promise<void> {
    const entry: Active = { run, abort: new RunAbort() };
    this.active.add(entry);
    // From the run's own progress: a timed heartbeat before the handler reports any must not reset it to 0.
    let progress = run.progress;
    const heartbeat = (p?: number | null, checkpoint?: Buffer | Uint8Array | null): void => {
      // Checked here, where the handler can hear of it: the daemon refuses the heartbeat (so extends no lease),
      // and a stored bad progress would make every timed heartbeat after it refused too.
      if (p !== undefined && p !== null && !(typeof p === 'number' && p >= 0 && p <= 1)) throw new RangeError(`progress: must be between 0 and 1 (got ${String(p)})`);
      if (checkpoint !== undefined && checkpoint !== null && !(checkpoint instanceof Uint8Array)) throw new TypeError('checkpoint: must be a Buffer or Uint8Array');
      if (checkpoint && checkpoint.length > MAX_CHECKPOINT_BYTES) throw new RangeError(`checkpoint: must be at most ${MAX_CHECKPOINT_BYTES} bytes (got ${checkpoint.length})`);
      if (p !== undefined && p !== null) progress = p;
      const bytes = !checkpoint ? Buffer.alloc(0) : Buffer.isBuffer(checkpoint) ? checkpoint : Buffer.from(checkpoint.buffer, checkpoint.byteOffset, checkpoint.byteLength);
      this.send({ heartbeat: { ref: run.ref, progress, checkpoint: bytes } }, false);
    };
    const every = this.opts.heartbeatEveryMs;
    const timer = every ? setInterval(() => heartbeat(), every) : undefined;
    entry.beat = timer;
    try {
      // In a span that continues the run's trace (a no-op without an OpenTelemetry SDK).
      const context = handlerContext(heartbeat, entry.abort);
      const result = await traceRun(run, () => this.opts.handler(run, context));
      clearInterval(timer);
      const output = run.workflow ? outputBytes(result) : null;
      this.opts.stats.completed++;
      if (output) this.send({ complete: { ref: run.ref, output } }, true);
      else this.queueComplete(run.ref);
    } catch (err) {
      clearInterval(timer);
      this.opts.stats.failed++;
      // A run cancelled by the daemon ends cancelled whatever the handler threw.
      const reason = entry.abort.reason;
      const cancelled = reason instanceof CancelledError;
      const message = cancelled ? reason.message : failMessage(err);
      this.send({ fail: { ref: run.ref, retryable: !cancelled && isRetryable(err), message } }, true);
    } finally {
      this.active.delete(entry);
      this.next();
    }
  }

  private next(): void {
    const run = this.backlog.shift();
    if (run) {
      void this.execute(run);
      return;
    }
    this.checkIdle();
  }

  /**
   * Completes leave together in one CompleteBatch, gathered for up to
   * COMPLETE_GATHER_MS: at 1,000 runs/s a message per run cost the daemon a
   * message, an ack and a share of a statement each. They go at once when
   * they hold half the credit (a small credit is not held back: its runs wait
   * for these answers to free it) and when the worker is closing.
   */
  private queueComplete(ref: DeliveryRefInfo): void {
    if (!this.stream?.acceptsBatches) {
      // A daemon that never answered Subscribe predates CompleteBatch.
      this.send({ complete: { ref } }, true);
      return;
    }
    this.completes.push(ref);
    if (this.closing || this.completes.length * 2 >= this.opts.concurrency) this.flushCompletes();
    else this.completeTimer ??= setTimeout(this.flushCompletes, COMPLETE_GATHER_MS);
  }

  private readonly flushCompletes = (): void => {
    clearTimeout(this.completeTimer);
    this.completeTimer = undefined;
    const refs = this.completes.splice(0);
    if (refs.length > 0) this.send(refs.length === 1 ? { complete: { ref: refs[0] } } : { completes: { refs } }, true);
  };

  /** Sends on the open stream, else on another session's; answers (not heartbeats) wait for the next stream otherwise. */
  private send(req: WorkRequest, keep: boolean): void {
    if (this.abandoned) return;
    if (this.stream?.send(req)) {
      if (keep) this.awaitAck(req);
      else if (req.heartbeat?.ref?.runId) {
        const ref = req.heartbeat.ref as DeliveryRefInfo;
        const out = this.beatsOut.get(ref.runId) ?? [];
        out.push(ref);
        out.sort(olderFirst);
        this.beatsOut.set(ref.runId, out);
      }
      return;
    }
    if (this.opts.forward?.(req)) return;
    // Kept while closing too: shutdown opens a stream to send them (sendWaitingAnswers).
    if (keep && !this.finished) this.outbox.push(req);
  }

  /** Remembers the answers of a request until their acks come back (one entry per run). */
  private awaitAck(req: WorkRequest): void {
    if (req.complete?.ref?.runId) this.unacked.set(req.complete.ref.runId, req);
    else if (req.fail?.ref?.runId) this.unacked.set(req.fail.ref.runId, req);
    else for (const ref of req.completes?.refs ?? []) if (ref.runId) this.unacked.set(ref.runId, { complete: { ref } });
  }

  private acked(ack: AckInfo): void {
    this.ackedOne(ack);
    // (Answers put back in the outbox meanwhile are sendWaitingAnswers' to send again.)
    if (this.ackWaiters.length > 0 && this.unacked.size === 0) for (const w of this.ackWaiters.splice(0)) w();
  }

  private ackedOne(ack: AckInfo): void {
    const beats = this.beatsOut.get(ack.runId);
    let answer: WorkRequest | undefined;
    /** The delivery the ack is taken to answer. */
    let ref: DeliveryRefInfo | undefined;
    // A refusal (superseded) while a Complete or Fail of the run is unacked is that
    // answer's: its delivery has ended, so a newer delivery of the run running here
    // is current, and its heartbeats are not refused. (Taken for a heartbeat's, it aborted that delivery.)
    const answerFirst = ack.code === 9 && this.unacked.has(ack.runId);
    if (!answerFirst && beats && beats.length > 0) {
      ref = ack.code === 0 ? beats.pop() : beats.shift();
      if (beats.length === 0) this.beatsOut.delete(ack.runId);
    } else {
      answer = this.unacked.get(ack.runId);
      this.unacked.delete(ack.runId);
      ref = (answer?.complete?.ref ?? answer?.fail?.ref) as DeliveryRefInfo | undefined;
    }
    const resent = this.resends.has(ack.runId);
    if (ack.code !== UNAVAILABLE) this.resends.delete(ack.runId);
    if (ack.code === UNAVAILABLE && answer && this.closing && !this.finished) {
      // Closing: sent again by sendWaitingAnswers while its time lasts (resendLater's timers stop at close).
      this.outbox.push(answer);
      this.opts.onAck?.(ack);
      return;
    }
    if (ack.code !== 0) {
      this.opts.stats.rejected++;
      // 9 FAILED_PRECONDITION: a delivery of this run was superseded. Abort
      // those of ours it makes stale (see abortSuperseded).
      if (ack.code === 9 && !this.wasForwarded(ack.runId) && !resent) this.abortSuperseded(ack.runId, ref);
      if (ack.code === UNAVAILABLE && answer) this.resendLater(ack.runId, answer);
    }
    this.opts.onAck?.(ack);
  }

  /** Sends an answer the daemon could not record again, after a pause that grows with each try. */
  private resendLater(runId: string, answer: WorkRequest): void {
    const tries = this.resends.get(runId) ?? 0;
    if (tries >= MAX_ANSWER_RESENDS || this.closing) {
      this.resends.delete(runId);
      return;
    }
    this.resends.set(runId, tries + 1);
    const timer = setTimeout(() => {
      this.resendTimers.delete(timer);
      this.send(answer, true);
    }, Math.min(ANSWER_RESEND_MAX_MS, ANSWER_RESEND_MS * 2 ** tries));
    this.resendTimers.add(timer);
  }

  /** Whether a rejection for this run answers a forwarded request (consumes one). */
  private wasForwarded(runId: string): boolean {
    const f = this.forwarded.get(runId);
    if (!f) return false;
    if (--f.count <= 0) this.forwarded.delete(runId);
    return true;
  }

  /**
   * The daemon refused a request for `runId` as superseded: the one for
   * delivery `ref`. Our deliveries of the run no newer than it are stale —
   * never a newer one still running here (the run handed out again to this
   * worker after a lease ran out: aborting it made a handler honouring its
   * signal fail, spending an attempt). Without a ref (an ack we cannot
   * place), the older of ours are (all but the newest; the only one if alone).
   */
  private abortSuperseded(runId: string, ref?: DeliveryRefInfo): void {
    const mine = [...this.active].filter((a) => a.run.runId === runId);
    mine.sort((a, b) => a.run.fence - b.run.fence || a.run.delivery - b.run.delivery);
    const stale = ref
      ? mine.filter((a) => olderFirst(a.run.ref, ref) <= 0)
      : mine.length === 1
        ? mine
        : mine.slice(0, -1);
    for (const a of stale) a.abort.abort(new Error(`timelane: delivery ${a.run.delivery} of run ${runId} was superseded`));
  }

  private get idle(): boolean {
    return this.active.size === 0 && this.backlog.length === 0 && this.staged.size === 0;
  }

  /** Wakes close() once nothing runs, waits or is held. */
  private checkIdle(): void {
    if (this.idle) for (const w of this.idleWaiters.splice(0)) w();
  }

  private waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.idle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.idleWaiters.push(done);
    });
  }
}

/** Orders deliveries of a run: older first (fence, then delivery number). */
function olderFirst(a: DeliveryRefInfo, b: DeliveryRefInfo): number {
  return Number(a.fence) - Number(b.fence) || a.delivery - b.delivery;
}

function isRetryable(err: unknown): boolean {
  return !(typeof err === 'object' && err !== null && 'retryable' in err && err.retryable === false);
}

function failMessage(err: unknown): string {
  const text =
    err instanceof Error ? (err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message) : String(err);
  return text.length > MAX_FAIL_MESSAGE ? text.slice(0, MAX_FAIL_MESSAGE - 1) + '…' : text;
}

/**
 * A step handler's result as Complete's output; null for none. Too large, or
 * not serialisable (a BigInt, a cycle, a function) ⇒ throws: the run fails,
 * not retryable — another attempt would return the same.
 */
function outputBytes(result: unknown): Buffer | null {
  if (result === undefined || result === null) return null;
  let json: string | undefined;
  if (!Buffer.isBuffer(result) && !(result instanceof Uint8Array) && typeof result !== 'string') {
    try {
      json = JSON.stringify(result);
    } catch (err) {
      throw Object.assign(new Error(`step output cannot be serialised as JSON: ${err instanceof Error ? err.message : String(err)}`), { retryable: false });
    }
    if (json === undefined) throw Object.assign(new Error(`step output cannot be serialised as JSON (a ${typeof result})`), { retryable: false });
  }
  const b = Buffer.isBuffer(result)
    ? result
    : result instanceof Uint8Array
      ? Buffer.from(result.buffer, result.byteOffset, result.byteLength)
      : Buffer.from(typeof result === 'string' ? result : json!, 'utf8');
  if (b.length > MAX_OUTPUT_BYTES) throw Object.assign(new Error(`step output is ${b.length} bytes, over the ${MAX_OUTPUT_BYTES}-byte limit: keep large data in your own storage and return a reference`), { retryable: false });
  return b.length > 0 ? b : null;
}
