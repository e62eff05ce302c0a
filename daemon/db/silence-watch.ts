/**
 * SilenceWatch — finds connections of the unbounded pools (the API's and the
 * window's) that went silent while a statement was out, and drops them.
 *
 * Why not a timeout: those pools run statements that may rightly take long (a
 * first load after an outage sorts every overdue run; a materialiser pass
 * writes many occurrences), and a statement cut short would be retried and
 * cut again. So a statement that has waited `suspectAfterMs` is not judged by
 * its age but by its backend: Postgres is asked, on a fresh connection,
 * whether that backend (pg_stat_activity, by pid) is running a statement. If
 * it is, the statement is working and is left alone, however long it takes.
 * If it is idle, or gone, our request or its answer was lost on the way (a
 * half-open connection: a NAT or firewall forgot it, nothing resets it), and
 * TCP would take minutes to give up, or for ever while something still
 * acknowledges the packets. The connection is destroyed: its statement fails
 * as on a lost connection (UNAVAILABLE), the caller retries, the pool opens a
 * fresh one.
 *
 * States of a watched statement: running (under `suspectAfterMs`) → suspect
 * (one check found its backend not running a statement) → silent (a second
 * check, at least CONFIRM_MS later, found the same: an answer on its way
 * does not take that long) → destroyed. A check that finds it running
 * clears the suspicion. A check that cannot reach Postgres decides nothing.
 *
 * Reads pg-pool's client list and pg's active query (`_clients`,
 * `_activeQuery`): neither library exposes "is this client waiting for an
 * answer". Both are pinned by the lockfile, and
 * test/fault/silent-postgres-slow-lane.test.ts fails if they move.
 */
import pg from 'pg';
import type { Logger } from '../log.js';
import type { Db } from './pool.js';

/** A second look this long after the first: a live connection's answer is never that long on its way. */
const CONFIRM_MS = 1_000;
/** The check's own connection and statement give up after this. */
const CHECK_TIMEOUT_MS = 5_000;

/** Whose backend is running a statement: `state` of pg_stat_activity, by pid ($1 int[]). */
const BACKEND_STATES = `SELECT pid, state FROM pg_stat_activity WHERE pid = ANY($1::int[])`;

interface WatchedClient {
  processID: number | null;
  _activeQuery?: object | null;
  connection?: { stream?: { destroy(): void } };
}

interface PoolInternals {
  _clients?: WatchedClient[];
}

export interface SilenceWatchOptions {
  /** The pools to watch, by name (for the log). */
  pools: Record<string, Db>;
  /** How to open the check's own connection (a fresh one: the pools' may be the silent ones). */
  clientConfig: pg.ClientConfig;
  /** A statement waiting this long gets its backend checked. */
  suspectAfterMs: number;
  log: Logger;
}

export class SilenceWatch {
  /** When each statement out was first seen (monotonic ms), by pg's query object. */
  private readonly seen = new WeakMap<object, number>();
  /** Statements whose backend one check found not running anything: when (monotonic ms). */
  private readonly suspect = new WeakMap<object, number>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private unsupportedLogged = false;

  constructor(private readonly opts: SilenceWatchOptions) {}

  start(): void {
    const every = Math.max(250, Math.min(CONFIRM_MS, this.opts.suspectAfterMs / 2));
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: checks the backends of statements out longer than suspectAfterMs; destroys the silent ones. */
  async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const now = performance.now();
      const old: { pool: string; client: WatchedClient; q: object; pid: number }[] = [];
      for (const [pool, db] of Object.entries(this.opts.pools)) {
        const clients = (db as unknown as PoolInternals)._clients;
        if (!Array.isArray(clients)) return this.unsupported();
        for (const client of clients) {
          const q = client._activeQuery;
          if (q === undefined) return this.unsupported();
          if (q === null || client.processID === null) continue;
          const first = this.seen.get(q);
          if (first === undefined) this.seen.set(q, now);
          else if (now - first >= this.opts.suspectAfterMs) old.push({ pool, client, q, pid: client.processID });
        }
      }
      if (old.length === 0) return;
      const states = await this.backendStates(old.map((o) => o.pid));
      if (states === null) return;
      const at = performance.now();
      for (const o of old) {
        if (o.client._activeQuery !== o.q) continue; // answered meanwhile
        const state = states.get(o.pid);
        // Silent only when the backend is idle or gone. 'active' is working; NULL (another role's backend)
        // and 'disabled' (track_activities off) say nothing.
        if (!(state === undefined || (typeof state === 'string' && state.startsWith('idle')))) {
          this.suspect.delete(o.q);
          continue;
        }
        const since = this.suspect.get(o.q);
        if (since === undefined || at - since < CONFIRM_MS) {
          if (since === undefined) this.suspect.set(o.q, at);
          continue;
        }
        this.opts.log.warn(
          { pool: o.pool, pid: o.pid, waitedMs: Math.round(at - (this.seen.get(o.q) ?? at)), backend: state ?? 'gone' },
          'a database connection went silent (its backend is not running our statement): dropping it',
        );
        o.client.connection?.stream?.destroy();
      }
    } finally {
      this.checking = false;
    }
  }

  /** pg_stat_activity's state by pid (absent: no such backend), or null when Postgres could not be asked. */
  private async backendStates(pids: number[]): Promise<Map<number, string | null> | null> {
    const c = new pg.Client({ ...this.opts.clientConfig, connectionTimeoutMillis: CHECK_TIMEOUT_MS, query_timeout: CHECK_TIMEOUT_MS });
    c.on('error', () => undefined);
    try {
      await c.connect();
      const { rows } = await c.query<{ pid: number; state: string | null }>(BACKEND_STATES, [pids]);
      return new Map(rows.map((r) => [r.pid, r.state]));
    } catch (err) {
      this.opts.log.debug({ err: String(err) }, 'silence check: could not ask Postgres');
      return null;
    } finally {
      void c.end().catch(() => undefined);
    }
  }

  private unsupported(): void {
    if (this.unsupportedLogged) return;
    this.unsupportedLogged = true;
    this.opts.log.error({}, 'silence watch: this pg / pg-pool version does not expose the fields it reads; silent connections are not detected');
  }
}
