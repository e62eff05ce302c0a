/**
 * `createWorker`: runs a handler for every run fired on the given queues.
 *
 * Each daemon delivers only the fires of the shards it owns, so a worker
 * must hold a stream to every member that owns shards of its queues:
 * - `discover: true` (the cluster default): `address` names seeds; the worker
 *   asks them for the live members (ListMembers) and keeps one stream to
 *   each member's address, refreshing the list every `discoverEveryMs` and
 *   whenever a stream fails. New members get a stream; members gone from the
 *   list have theirs closed gracefully (handlers finish and answer first).
 * - otherwise one stream per given address: one localhost address is sidecar
 *   mode, a fixed list is a static cluster.
 * Each address gets its own session (worker-session.ts) with its own
 * credit of `concurrency`.
 *
 * A handler that resolves completes the run; one that throws fails it,
 * retryably unless the error has `retryable === false` (see
 * NonRetryableError), which sends the run to the dead-letter state at once.
 */
import { hostname } from 'node:os';
import type * as grpc from '@grpc/grpc-js';
import { DEFAULT_ADDRESS } from './client.js';
import type { AckInfo } from './types.js';
import type { WorkRequest } from '../proto/gen/timelane/v1/WorkRequest.js';
import { MemberDiscovery, planStreams } from './discovery.js';
import { WorkerSession, handlerContext, type RunHandler, type WorkerStats } from './worker-session.js';
import { DEFAULT_WARM_UP_RUNS, warmUpWorkerOnce } from './warm-up.js';

export type { RunHandler, WorkerContext, WorkerStats } from './worker-session.js';
export { CancelledError } from './worker-session.js';

/** Throw this (or any error with `retryable = false`) to fail a run without retry. */
export class NonRetryableError extends Error {
  readonly retryable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableError';
  }
}

export interface WorkerOptions {
  /**
   * Without `discover`: the daemon(s) to stream from — one (sidecar mode) or
   * every member. With `discover`: seeds to ask for the member list.
   * Default 127.0.0.1:7070.
   */
  address?: string | string[];
  /** Find the members through the seeds in `address` and follow joins and leaves. Default false. */
  discover?: boolean;
  /** With `discover`: how often the member list is refreshed, in ms. Default 2,000. */
  discoverEveryMs?: number;
  /** Called with the stream addresses each time they change (and once the first streams open). */
  onAddresses?: (addresses: string[]) => void;
  /** Queues to receive runs from (1..64). */
  queues: string[];
  /** Most handlers running at once per address; sent as the stream's credit (max_in_flight). Default 10. */
  concurrency?: number;
  /**
   * Staging: let each daemon hand runs over up to this many ms before their
   * due time (it does so for the runs it has claimed ahead, `--claim-ahead-ms`,
   * while this worker has credit); the worker holds them and starts each at
   * its due time by the daemon's clock. The daemon's timer and the network
   * are then off the path to the handler. A held run counts against
   * `concurrency` (the daemon keeps a tenth of it, 1 to 16 runs, for runs due
   * now: with concurrency 1 nothing is staged). At-least-once runs only. 0
   * turns it off (runs arrive when due). 0..1000, default 200.
   */
  stageAheadMs?: number;
  handler: RunHandler;
  /**
   * The first worker of a process first runs this many synthetic runs through
   * the per-run code of its receiving path (decode, hold, context, answer;
   * never the handler, nothing sent), so that a worker started into a busy
   * queue does not take its first second's runs with cold code. About 0.1–0.3
   * s of CPU, once. 0: none. Default 10,000.
   */
  warmUpRuns?: number;
  /** Name shown in daemon logs and GetRun. Default `<hostname>:<pid>`. */
  workerId?: string;
  /** If set, heartbeat every in-flight run this often (ms) while its handler runs. */
  heartbeatEveryMs?: number;
  /**
   * Stream errors (each is followed by a reconnect) and, with `discover`,
   * failed member-list refreshes (`discovery: true`; the streams stay as they
   * are). Default: ignored.
   */
  onError?: (err: Error, info: { address: string; runId?: string; discovery?: boolean }) => void;
  /** Every ack the daemons send (answers to Complete, Fail and Heartbeat). */
  onAck?: (ack: AckInfo) => void;
  /** Default: insecure (plaintext). TLS: `tlsCredentials(…)`. */
  credentials?: grpc.ChannelCredentials;
  /** Bearer token (a daemon with `--auth-file`; role worker). */
  token?: string;
  /** How long `close()` waits for handlers in flight before aborting them. Default 10,000 ms. Also bounds the graceful close of a stream to a member that left. */
  closeTimeoutMs?: number;
  /** First reconnect delay; doubles (with jitter) up to `reconnectMaxMs`. Default 100 ms. */
  reconnectInitialMs?: number;
  /** Default 5,000 ms. */
  reconnectMaxMs?: number;
}

export interface Worker {
  /** Live counters, summed over all addresses. */
  readonly stats: WorkerStats;
  /** Addresses a stream is kept to right now (sorted). */
  readonly addresses: string[];
  /**
   * With `discover`: refreshes the member list now and resolves once the
   * streams follow it (rejects if no candidate answered). Without: no-op.
   */
  refresh(): Promise<void>;
  /**
   * Stops discovery and reconnecting, lets handlers in flight finish and
   * answer (up to `timeoutMs`, default `closeTimeoutMs`), then ends the
   * streams. Idempotent.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** How far ahead of due a worker takes runs by default (WorkerOptions.stageAheadMs). */
const DEFAULT_STAGE_AHEAD_MS = 200;

/** Refreshes triggered by stream failures come at most this often. */
const MIN_REFRESH_GAP_MS = 250;

export function createWorker(options: WorkerOptions): Worker {
  const addresses = validate(options);
  if (options.warmUpRuns !== 0) warmUpWorkerOnce(options.warmUpRuns ?? DEFAULT_WARM_UP_RUNS, handlerContext);
  const stats: WorkerStats = { received: 0, completed: 0, failed: 0, rejected: 0 };
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const onError = options.onError ?? (() => {});
  const sessions = new Map<string, WorkerSession>();
  /** Sessions of members that left, closing gracefully. */
  const retiring = new Set<WorkerSession>();
  let closed = false;

  const all = (): WorkerSession[] => [...sessions.values(), ...retiring];
  /** An answer whose own stream is down goes out on any other open stream (the daemons judge it by its ref). */
  const forward = (from: string) => (req: WorkRequest): boolean => all().some((s) => s.address !== from && s.forwardHere(req));

  const open = (address: string): void => {
    const session = new WorkerSession({
      address,
      queues: options.queues,
      concurrency: options.concurrency ?? 10,
      stageAheadMs: options.stageAheadMs ?? DEFAULT_STAGE_AHEAD_MS,
      workerId: options.workerId ?? defaultWorkerId(),
      handler: options.handler,
      heartbeatEveryMs: options.heartbeatEveryMs,
      credentials: options.credentials,
      token: options.token,
      reconnectInitialMs: options.reconnectInitialMs ?? 100,
      reconnectMaxMs: options.reconnectMaxMs ?? 5_000,
      stats,
      onError,
      onAck: options.onAck,
      onStreamEnd: () => discovery?.kick(),
      forward: forward(address),
    });
    sessions.set(address, session);
    session.start();
  };

  const retire = (address: string): void => {
    const session = sessions.get(address);
    if (!session) return;
    sessions.delete(address);
    retiring.add(session);
    void session.close(closeTimeoutMs).finally(() => retiring.delete(session));
  };

  const follow = (wanted: string[]): void => {
    if (closed) return;
    const plan = planStreams(sessions.keys(), wanted);
    if (plan.open.length === 0 && plan.close.length === 0) return;
    for (const a of plan.open) open(a);
    for (const a of plan.close) retire(a);
    options.onAddresses?.([...sessions.keys()].sort());
  };

  const discovery = options.discover
    ? new DiscoveryLoop(
        new MemberDiscovery({ seeds: addresses, credentials: options.credentials, token: options.token, callTimeoutMs: 5_000 }),
        options.discoverEveryMs ?? 2_000,
        () => [...sessions.keys()],
        follow,
        (err, address) => onError(err, { address, discovery: true }),
      )
    : undefined;

  if (discovery) discovery.start();
  else follow(addresses);

  let closing: Promise<void> | undefined;
  return {
    stats,
    get addresses() {
      return [...sessions.keys()].sort();
    },
    refresh: () => discovery?.refresh() ?? Promise.resolve(),
    close(timeoutMs = closeTimeoutMs): Promise<void> {
      closing ??= (async () => {
        closed = true;
        discovery?.stop();
        await Promise.all(all().map((s) => s.close(timeoutMs)));
      })();
      return closing;
    },
  };
}

/**
 * Runs discovery every `everyMs` and on `kick()` (coalesced, at most every
 * MIN_REFRESH_GAP_MS); one refresh at a time. A failed refresh keeps the
 * streams as they are.
 */
class DiscoveryLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastAt = 0;
  private lastError = '';

  constructor(
    private readonly discovery: MemberDiscovery,
    private readonly everyMs: number,
    private readonly known: () => string[],
    private readonly follow: (addresses: string[]) => void,
    private readonly report: (err: Error, address: string) => void,
  ) {}

  start(): void {
    void this.refresh().catch(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.discovery.close();
  }

  /** Refresh soon (a stream failed). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = Math.max(0, this.lastAt + MIN_REFRESH_GAP_MS - Date.now());
    this.arm(wait);
  }

  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    // One at a time; a refresh asked for meanwhile starts after it, so it sees a fresh list.
    if (this.running) return this.running.catch(() => undefined).then(() => this.refresh());
    clearTimeout(this.timer);
    this.lastAt = Date.now();
    let failure: unknown;
    this.running = this.discovery
      .discover(this.known())
      .then(
        (res) => {
          this.lastError = '';
          if (!this.stopped) this.follow(res.addresses);
        },
        (err: unknown) => {
          failure = err;
          if (this.stopped) return;
          const e = err instanceof Error ? err : new Error(String(err));
          // Report a failure once until something changes.
          if (e.message !== this.lastError) this.report(e, 'discovery');
          this.lastError = e.message;
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.arm(MIN_REFRESH_GAP_MS);
        } else this.arm(this.everyMs);
      })
      .then(() => {
        if (failure !== undefined) throw failure;
      });
    return this.running;
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh().catch(() => undefined), ms);
  }
}

/** A queue name and a namespace, as the daemon checks them (daemon/grpc/validate.ts, QUEUE_RE and NAMESPACE_RE). */
const QUEUE_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
const NAMESPACE_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/** Most queues one subscription names (the daemon's bound). */
const MAX_QUEUES = 64;
/** The daemon's own queue (its recurring workflow starts): a worker may not take from it. */
const RESERVED_QUEUE = 'timelane:workflow-start';

/** A queue a worker may subscribe to, as the daemon judges it: `queue`, or `ns/queue` (an admin's view of a namespace). */
function subscribableQueue(field: string, q: string): void {
  const bad = (why: string): never => {
    throw new TypeError(`${field}: ${why} (got ${JSON.stringify(q)})`);
  };
  if (typeof q !== 'string') bad('must be a queue name');
  const slash = q.indexOf('/');
  if (slash >= 0 && !NAMESPACE_RE.test(q.slice(0, slash))) bad('the part before "/" must be a namespace (1..64 chars of [A-Za-z0-9_.-])');
  if (!QUEUE_RE.test(q.slice(slash + 1))) bad('must be 1..128 chars of [A-Za-z0-9_.:-], after an optional "namespace/"');
  if (q === RESERVED_QUEUE) bad('is reserved: the daemon runs its recurring workflow starts there');
}

function validate(options: WorkerOptions): string[] {
  const raw = options.address ?? DEFAULT_ADDRESS;
  const addresses = [...new Set((Array.isArray(raw) ? raw : [raw]).map((a) => a.trim()).filter(Boolean))];
  if (addresses.length === 0) throw new TypeError('address: give at least one address');
  if (options.queues.length === 0 || options.queues.length > MAX_QUEUES) throw new TypeError(`queues: give 1..${MAX_QUEUES} queues (got ${options.queues.length})`);
  // Refused here: the daemon refuses the subscription, and a worker reconnecting to it would retry for ever.
  options.queues.forEach((q, i) => subscribableQueue(`queues[${i}]`, q));
  const id = options.workerId;
  if (id !== undefined && (typeof id !== 'string' || id.length > 128 || id.includes('\u0000')))
    throw new TypeError(`workerId: must be a string of at most 128 chars without U+0000 (got ${JSON.stringify(String(id).slice(0, 140))})`);
  const c = options.concurrency ?? 10;
  if (!Number.isInteger(c) || c < 1 || c > 10_000) throw new RangeError('concurrency: must be an integer in 1..10000');
  const stage = options.stageAheadMs ?? DEFAULT_STAGE_AHEAD_MS;
  if (!Number.isInteger(stage) || stage < 0 || stage > 1000) throw new RangeError(`stageAheadMs: must be an integer in 0..1000 (got ${String(stage)})`);
  const warm = options.warmUpRuns ?? DEFAULT_WARM_UP_RUNS;
  if (!Number.isInteger(warm) || warm < 0 || warm > 1_000_000) throw new RangeError(`warmUpRuns: must be an integer in 0..1000000 (got ${String(warm)})`);
  const hb = options.heartbeatEveryMs;
  if (hb !== undefined && !(hb > 0)) throw new RangeError('heartbeatEveryMs: must be > 0');
  const every = options.discoverEveryMs;
  if (every !== undefined && !(every >= 50)) throw new RangeError('discoverEveryMs: must be >= 50');
  return addresses;
}

function defaultWorkerId(): string {
  return `${hostname()}:${process.pid}`;
}
