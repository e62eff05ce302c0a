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
 * as on a lost connection (UNAVAILABLE; the loader retries, API callers
 * retry), and so are the idle connections of the same pool, most likely
 * forgotten at the same moment (the pool opens fresh ones as needed).
 *
 * States of the watch: unverified (until one connection's reported pid is
 * found to be its real backend's: behind a pooler or proxy the pids are the
 * pooler's own, every backend would look "gone", so the watch stays off) →
 * watching, or off for good. States of a watched statement: running (under
 * `suspectAfterMs`) → suspect (one check found its backend idle or gone) →
 * silent (a second check, CONFIRM_MS later, found the same: a live answer is
 * never that long on its way) → destroyed. A check that finds it running
 * clears the suspicion and looks again later and later (a long statement must
 * not cost a connection a second). A check that cannot reach Postgres
 * decides nothing.
 *
 * Not caught: an answer larger than the socket buffers, lost on the way. Its
 * backend stays 'active' (waiting to write) until TCP gives up; telling that
 * from a big result our client is slow to read would need guessing.
 *
 * Reads pg-pool's client lists and pg's active query (`_clients`, `_idle`,
 * `_activeQuery`): neither library exposes "is this client waiting for an
 * answer". Both are pinned by the lockfile, and
 * test/integration/silence-watch.test.ts fails if they move.
 */
import pg from 'pg';
import type { Logger } from '../log.js';
import { timedQuery, type Db } from './pool.js';

/** A second look this long after the first: a live connection's answer is never that long on its way. */
const CONFIRM_MS = 2_000;
/** A statement found running is looked at again after this, doubling up to MAX_RECHECK_MS. */
const FIRST_RECHECK_MS = 2_000;
const MAX_RECHECK_MS = 60_000;
/** The check's own connection and statement give up after this. */
const CHECK_TIMEOUT_MS = 5_000;

/** pg_stat_activity's state of backends, by pid ($1 int[]). */
const BACKEND_STATES = `SELECT pid, state FROM pg_stat_activity WHERE pid = ANY($1::int[])`;
/** The backend of this connection, as Postgres knows it (a pooler or proxy in between reports another pid). */
const OWN_BACKEND = `SELECT pg_backend_pid() AS pid`;

interface WatchedClient {
  processID: number | null;
  _activeQuery?: object | null;
  connection?: { stream?: { destroy(): void } };
}

interface PoolInternals {
  _clients?: WatchedClient[];
  _idle?: { client: WatchedClient }[];
}

/** What the watch knows of one statement out. */
interface Watched {
  firstSeen: number;
  /** Not looked at before this (monotonic ms). */
  nextCheck: number;
  recheckMs: number;
  /** When a check first found its backend idle or gone. */
  suspectSince?: number;
}

export interface SilenceWatchOptions {
  /** The pools to watch, by name (for the log). */
  pools: Record<string, Db>;
  /** How to open the check's own connection (a fresh one: the pools' may be the silent ones). */
  clientConfig: pg.ClientConfig;
  /** A statement waiting this long gets its backend checked. */
  suspectAfterMs: number;
  log: Logger;
  /** Monotonic ms. @defaultValue performance.now */
  now?: () => number;
}

export class SilenceWatch {
  private readonly watched = new WeakMap<object, Watched>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  /** null: not verified yet; false: pids are not backends' (a pooler), the watch is off. */
  private pidsAreBackends: boolean | null = null;
  private unsupportedLogged = false;

  constructor(private readonly opts: SilenceWatchOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  start(): void {
    const every = Math.max(250, Math.min(1_000, this.opts.suspectAfterMs / 2));
    this.timer = setInterval(() => {
      this.check().catch((err: unknown) => this.opts.log.warn({ err: String(err) }, 'silence watch: a check failed'));
    }, every);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round: checks the backends of statements out longer than suspectAfterMs; destroys the silent connections. */
  async check(): Promise<void> {
    if (this.checking || this.pidsAreBackends === false) return;
    this.checking = true;
    try {
      if (this.pidsAreBackends === null && !(await this.verifyPids())) return;
      const now = this.now();
      const due: { pool: string; db: Db; client: WatchedClient; q: object; w: Watched; pid: number }[] = [];
      for (const [pool, db] of Object.entries(this.opts.pools)) {
        const clients = (db as unknown as PoolInternals)._clients;
        if (!Array.isArray(clients)) return this.unsupported();
        for (const client of clients) {
          if (!('_activeQuery' in client)) return this.unsupported();
          const q = client._activeQuery;
          if (!q || client.processID === null) continue;
          let w = this.watched.get(q);
          if (!w) this.watched.set(q, (w = { firstSeen: now, nextCheck: now + this.opts.suspectAfterMs, recheckMs: FIRST_RECHECK_MS }));
          if (now >= w.nextCheck) due.push({ pool, db, client, q, w, pid: client.processID });
        }
      }
      if (due.length === 0) return;
      const states = await this.backendStates(due.map((d) => d.pid));
      if (states === null) return;
      const at = this.now();
      for (const d of due) {
        if (d.client._activeQuery !== d.q) continue; // answered meanwhile
        const state = states.get(d.pid);
        // Silent only when the backend is idle or gone. 'active' is working; NULL (another role's
        // backend) and 'disabled' (track_activities off) say nothing.
        if (!(state === undefined || (typeof state === 'string' && state.startsWith('idle')))) {
          d.w.suspectSince = undefined;
          d.w.nextCheck = at + d.w.recheckMs;
          d.w.recheckMs = Math.min(d.w.recheckMs * 2, MAX_RECHECK_MS);
          continue;
        }
        if (d.w.suspectSince === undefined) {
          d.w.suspectSince = at;
          d.w.nextCheck = at + CONFIRM_MS;
          continue;
        }
        this.opts.log.warn(
          { pool: d.pool, pid: d.pid, waitedMs: Math.round(at - d.w.firstSeen), backend: state ?? 'gone' },
          'a database connection went silent (its backend is not running our statement): dropping it and the pool’s idle ones',
        );
        d.client.connection?.stream?.destroy();
        for (const idle of (d.db as unknown as PoolInternals)._idle ?? []) idle.client.connection?.stream?.destroy();
      }
    } finally {
      this.checking = false;
    }
  }

  /** Whether a pooled connection's pid is its backend's; false turns the watch off for good (a pooler or proxy in between). */
  private async verifyPids(): Promise<boolean> {
    const db = Object.values(this.opts.pools)[0];
    if (!db) return false;
    let client: pg.PoolClient | undefined;
    let broken: Error | undefined;
    try {
      client = await db.connect();
      const { rows } = await client.query<{ pid: number }>(timedQuery(OWN_BACKEND, CHECK_TIMEOUT_MS));
      const reported = (client as unknown as WatchedClient).processID;
      this.pidsAreBackends = rows[0]?.pid === reported;
      if (!this.pidsAreBackends)
        this.opts.log.warn(
          { reported, backend: rows[0]?.pid },
          'silence watch off: connections report another pid than their backend’s (a pooler or proxy in between?); a silent window or API connection then waits on TCP',
        );
      return this.pidsAreBackends;
    } catch (err) {
      // Postgres away, or this very connection silent (released with its error: the pool drops it). Next round tries again.
      broken = err instanceof Error ? err : new Error(String(err));
      return false;
    } finally {
      client?.release(broken);
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
