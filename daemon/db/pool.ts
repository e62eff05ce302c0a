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
  const pool = new pg.Pool({ ...clientConfig(opts), max: opts.poolSize ?? 16, idleTimeoutMillis: 30_000 });
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
