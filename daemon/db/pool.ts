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
}

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
    options: `-c search_path=${opts.schema},public`,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
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
 * (EXPLAIN with the given parameters: planned, not run). A new backend's
 * first plan loads the catalog entries of every table and index it touches;
 * without this the engine paid that on its first claims and answers, in the
 * first second of a burst (cold burst at 10,000/s: second-0 lag p50 95–120 ms
 * → 25–33 ms). Pair with `keepOpen` so the primed connections stay.
 */
export async function primeConnections(db: Db, statements: readonly { text: string; values: unknown[] }[]): Promise<void> {
  const clients: pg.PoolClient[] = [];
  try {
    for (let i = 0; i < db.options.max; i++) clients.push(await db.connect());
    await Promise.all(clients.map(async (c) => {
      for (const s of statements) await c.query(`EXPLAIN ${s.text}`, s.values);
    }));
  } catch (err) {
    throw mapStorageError(err);
  } finally {
    clients.forEach((c) => c.release());
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
  try {
    return await fn(client);
  } finally {
    client.release();
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
      await client.query('ROLLBACK').catch(() => undefined);
      throw mapStorageError(err);
    }
  });
}
