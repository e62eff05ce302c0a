/**
 * The one interface every system of `npm run bench:peers` is driven through
 * (bench/lib/peers/<system>.ts), so the scenario (bench/lib/peers/scenario.ts)
 * is the same code for all of them.
 *
 * Life of an adapter: setup() → consume(onReceipt) → schedule(jobs) → …fire…
 * → teardown(). teardown() is always called (after an error too), may run
 * while another call is still in flight (Ctrl-C), and is idempotent: it stops
 * the consumer, closes clients, kills the children the adapter started and
 * drops / deletes the data it created.
 */

export type SystemName = 'timelane' | 'bullmq' | 'bullmq_hz100' | 'pgboss' | 'graphile';

/** Every system, in the order they run. */
export const SYSTEMS: readonly SystemName[] = ['timelane', 'bullmq', 'bullmq_hz100', 'pgboss', 'graphile'];

/** One delayed job of the scenario: `index` travels in the job (or is mapped back from its id). */
export interface PeerJob {
  index: number;
  /** Epoch ms (whole). */
  dueAtMs: number;
}

/** Called by the consumer as each job arrives, before it completes it: wall clock, sub-ms (wallNowMs of @timelane/client). */
export type OnReceipt = (index: number, receivedAtMs: number) => void;

/** Called by schedule() as each chunk of jobs is acknowledged by the system (in any order). */
export type OnScheduled = (jobs: readonly PeerJob[], ackedAtMs: number) => void;

export interface PeerAdapter {
  readonly system: SystemName;
  /** How the system is configured for this run, one line (shown in the report). */
  describe(): string;
  /** Fresh infrastructure (database / Redis prefix / server / daemon) and clients. */
  setup(): Promise<void>;
  /** Starts the one consumer: it records each receipt and completes the job. */
  consume(onReceipt: OnReceipt): Promise<void>;
  /** Schedules `jobs` (in due order) as delayed jobs; resolves once all are acknowledged. */
  schedule(jobs: readonly PeerJob[], onScheduled: OnScheduled): Promise<void>;
  /** Stops and removes everything setup() and consume() started. Idempotent. */
  teardown(): Promise<void>;
  /** The pid of the system's own server process, if it has one besides Postgres and Redis (timelane's daemon). */
  daemonPid(): number | undefined;
  /** The Postgres database it uses, if any (its backends' CPU is counted). */
  database(): string | undefined;
}

/** What every adapter is given. */
export interface PeerSettings {
  adminUrl: string;
  redisUrl: string;
  rate: number;
  /** Jobs per schedule call. */
  chunkSize: number;
  /** Schedule calls in flight. */
  parallel: number;
  log: (msg: string) => void;
}

/** Reads the scenario's index out of a job payload `{ i: number }`; -1 when absent. */
export function payloadIndex(payload: unknown): number {
  if (typeof payload !== 'object' || payload === null) return -1;
  const i = (payload as { i?: unknown }).i;
  return typeof i === 'number' && Number.isInteger(i) ? i : -1;
}
