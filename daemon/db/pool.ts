import pg from 'pg';
import { mapStorageError } from './storage-errors.js';

/** int8 (bigint) as a JS number: run ids and fences stay far below 2^53. */
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DbOptions {
  /** libpq connection string, e.g. postgres://user@host:5432/db. */
  url: string;
  /** Schema holding timelane's tables; created by `migrate`. @defaultValue "timelane" */
  schema: string;
  /** Pool size. @defaultValue 16 */
  poolSize?: number;
  /** Never close idle connections (the engine's pools: a primed connection stays primed). @defaultValue false */
  keepOpen?: boolean;
  /**
   * The pool runs keyed statements only (rows by id, a batch at a time): the
   * planner is told so (no sequential scans, hash or merge joins). A prepared
   * statement's generic plan is then index lookups even when it was made on
   * a near-empty table, where a scan is cheapest, and it stays right as the
   * table grows; so prepared statements use it from their first run (never
   * planned again). Only for pools whose every statement is such a lookup:
   * the engine's claim and complete pools (test/integration/keyed-plans.test.ts). @defaultValue false
   */
  keyedOnly?: boolean;
  /**
   * Bounds every statement of the pool: Postgres cancels one running longer
   * (statement_timeout), and the client gives up on an answer
   * READ_TIMEOUT_GRACE_MS after that (query_timeout) and drops the
   * connection. So a connection gone silent (a half-open TCP connection:
   * no reset, nothing answers) fails its statement within the bound instead
   * of waiting minutes for TCP to give up. Only for pools whose every
   * statement is keyed and takes milliseconds (claim, answers, leases): a
   * statement cancelled for taking long would be retried as it is, and
   * cancelled again. @defaultValue unbounded
   */
  statementTimeoutMs?: number;
  /**
   * Bounds every wait of the pool's statements for a lock (lock_timeout):
   * one past it fails UNAVAILABLE (isLockTimeout), and its connection is
   * free again. For the answer pool, whose few connections a run's row held
   * by a transaction that does not end (an operator's psql session) would
   * otherwise keep for the whole statement bound, and every other worker's
   * Fail and Heartbeat with them. @defaultValue unbounded
   */
  lockTimeoutMs?: number;
}

/** How much longer than statement_timeout the client waits for an answer before it drops the connection. */
const READ_TIMEOUT_GRACE_MS = 1_000;
/** pg's error for a query_timeout that ran out. */
const READ_TIMEOUT_MESSAGE = 'Query read timeout';

/** The client gave up waiting for an answer (`err`, or the error it was mapped from): its connection may be dead and must not be reused. */
export function isReadTimeout(err: unknown): boolean {
  const is = (e: unknown): boolean => e instanceof Error && e.message === READ_TIMEOUT_MESSAGE;
  return is(err) || is((err as { cause?: unknown } | null)?.cause);
}

/** A statement the client gives up on after `ms` (pg honours a per-query query_timeout; its types do not list it). */
export function timedQuery(text: string, ms: number): pg.QueryConfig {
  const q: pg.QueryConfig & { query_timeout: number } = { text, query_timeout: ms };
  return q;
}

/** The planner settings of a keyedOnly pool's sessions. */
const KEYED_ONLY = ' -c enable_seqscan=off -c enable_hashjoin=off -c enable_mergejoin=off -c plan_cache_mode=force_generic_plan';

export type Db = pg.Pool;
export type Queryable = pg.Pool | pg.PoolClient | pg.Client;

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_RE.test(schema)) throw new Error(`database schema: must match ${SCHEMA_RE} (got "${schema}")`);
}

/** Connection config shared by the pool and the dedicated LISTEN client. */
export function clientConfig(opts: DbOptions): pg.ClientConfig {
  assertSchemaName(opts.schema);
  return {
    connectionString: opts.url,
    options: `-c search_path=${opts.schema},public${opts.keyedOnly ? KEYED_ONLY : ''}`,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    // Engine connections stay open while idle: probe them well before a NAT or
    // firewall idle timeout could drop one silently (the OS default is 2 h).
    keepAliveInitialDelayMillis: 10_000,
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs, query_timeout: opts.statementTimeoutMs + READ_TIMEOUT_GRACE_MS } : {}),
    ...(opts.lockTimeoutMs ? { lock_timeout: opts.lockTimeoutMs } : {}),
  };
}

export function createPool(opts: DbOptions): Db {
  const max = opts.poolSize ?? 16;
  const pool = new pg.Pool({ ...clientConfig(opts), max, min: opts.keepOpen ? max : 0, idleTimeoutMillis: 30_000 });
  // A client losing its connection (Postgres restart) must not crash the daemon:
  // idle ones report on the pool, checked-out ones on themselves (the query in
  // flight is rejected and handled by its caller).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs a query and maps storage errors to domain errors. */
export async function query<R extends pg.QueryResultRow>(db: Queryable, text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>(text, values);
  } catch (err) {
    throw mapStorageError(err);
  }
}

/**
 * `query` as a prepared statement named `name` (prepared once per
 * connection, then only bound and executed): for long statements run often,
 * whose planning costs as much as their execution.
 */
export async function queryPrepared<R extends pg.QueryResultRow>(db: Queryable, name: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>({ name, text, values });
  } catch (err) {
    throw mapStorageError(err);
  }
}

/**
 * Opens every connection of `db` and plans each statement on each of them
 * (EXPLAIN with the given parameters: planned, not run; at most 2 s each; a
 * statement with a `name` is prepared under it and run, in a transaction
 * rolled back, so give it parameters that touch nothing). A
 * new backend's first plan loads the catalog entries of every table and
 * index it touches; primed, the engine's first claims and answers do not.
 * Pair with `keepOpen` so the primed connections stay. Rejects if any
 * connection or plan failed (every client is released either way).
 */
export async function primeConnections(db: Db, statements: readonly { name?: string; text: string; values: unknown[] }[]): Promise<void> {
  const clients: pg.PoolClient[] = [];
  // A client whose priming failed is released with its error: the pool drops it rather than reuse it.
  const broken = new Map<pg.PoolClient, Error>();
  try {
    for (let i = 0; i < db.options.max; i++) clients.push(await db.connect());
    await Promise.all(
      clients.map(async (c) => {
        try {
          await c.query('BEGIN');
          await c.query(`SET LOCAL statement_timeout = 2000`);
          // A named statement is prepared on the connection, and run (the transaction is rolled back).
          for (const s of statements) await (s.name ? c.query({ name: s.name, text: s.text, values: s.values }) : c.query(`EXPLAIN ${s.text}`, s.values));
          await c.query('ROLLBACK');
        } catch (err) {
          broken.set(c, err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
    const first = broken.values().next();
    if (!first.done) throw first.value;
  } catch (err) {
    throw mapStorageError(err);
  } finally {
    clients.forEach((c) => c.release(broken.get(c)));
  }
}

/** Runs `fn` on one pooled client (for work that must start only once a connection is in hand). */
export async function withClient<T>(db: Db, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await db.connect();
  } catch (err) {
    throw mapStorageError(err);
  }
  let broken: Error | undefined;
  try {
    return await fn(client);
  } catch (err) {
    // A connection that went silent would fail every statement queued on it next.
    if (isReadTimeout(err)) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

/** Runs `fn` in one transaction on a dedicated client. */
export function transaction<T>(db: Db, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(db, async (client) => {
    await query(client, 'BEGIN');
    try {
      const result = await fn(client);
      await query(client, 'COMMIT');
      return result;
    } catch (err) {
      // On a connection gone silent ROLLBACK would wait out another timeout; withClient drops it.
      if (!isReadTimeout(err)) await client.query('ROLLBACK').catch(() => undefined);
      throw mapStorageError(err);
    }
  });
}
