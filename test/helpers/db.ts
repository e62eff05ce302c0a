import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type Db, type DbOptions } from '../../daemon/db/pool.js';
import { migrate } from '../../daemon/db/migrate.js';

/** The running test Postgres (trust auth). Override with TEST_DATABASE_URL. */
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

function urlFor(database: string, base = ADMIN_URL): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface TestDatabase {
  name: string;
  url: string;
  opts: DbOptions;
  pool: Db;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file, migrated with `shardCount` shards.
 * `drop()` ends the pool and drops the database (terminating stragglers).
 */
export async function createTestDatabase(shardCount = 8, adminUrl = ADMIN_URL): Promise<TestDatabase> {
  const name = uniqueName('tl_test');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = urlFor(name, adminUrl);
  const opts: DbOptions = { url, schema: 'timelane', poolSize: 8 };
  await migrate(opts, shardCount);
  const pool = createPool(opts);
  return {
    name,
    url,
    opts,
    pool,
    async drop() {
      await pool.end().catch(() => undefined);
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** The status of each of `ids`, by run id (runs that do not exist are missing). */
export async function runStatuses(pool: pg.Pool, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; status: string }>('SELECT id::text, status FROM timelane.runs WHERE id = ANY($1::int8[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** A run's row held by a transaction of its own (an operator's open psql session) until commit() or end(). */
export interface HeldRow<R> {
  /** The row as the lock read it (`columns` of the run). */
  row: R | undefined;
  /** Commits (the lock goes). */
  commit(): Promise<void>;
  /** Rolls back if still open, and gives the connection back: for afterAll. */
  end(): Promise<void>;
}

/** Locks run `runId` FOR UPDATE in a transaction left open, reading `columns` of it. */
export async function holdRunRow<R extends pg.QueryResultRow>(pool: pg.Pool, runId: string, columns = '1 AS held'): Promise<HeldRow<R>> {
  const c = await pool.connect();
  c.on('error', () => undefined);
  await c.query('BEGIN');
  const { rows } = await c.query<R>(`SELECT ${columns} FROM timelane.runs WHERE id = $1 FOR UPDATE`, [runId]);
  let released = false;
  return {
    row: rows[0],
    commit: async () => {
      await c.query('COMMIT');
    },
    end: async () => {
      if (released) return;
      released = true;
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    },
  };
}
