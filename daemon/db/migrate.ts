import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import pg from 'pg';
import { assertSchemaName, clientConfig, type DbOptions } from './pool.js';

/**
 * Applies `migrations/NNNN_name.sql` in order, each in its own transaction
 * under `pg_advisory_xact_lock`, recording the version in the same transaction.
 * Refuses to run code against a database migrated by newer code.
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = resolveMigrationsDir()): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f.replace(/\.sql$/, ''), sql: readFileSync(path.join(dir, f), 'utf8') }));
}

function resolveMigrationsDir(): string {
  // Works from the source tree (daemon/db) and from dist (dist/daemon/db).
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = path.resolve(here, up, 'migrations');
    try {
      if (readdirSync(dir).some((f) => f.endsWith('.sql'))) return dir;
    } catch {
      /* try the next candidate */
    }
  }
  throw new Error(`migrations folder not found near ${here}`);
}

const LOCK_KEY = 0x74696d65; // "time"

export interface MigrateResult {
  applied: string[];
  version: number;
}

/** Applies pending migrations and seeds the shard rows. Safe to run concurrently. */
export async function migrate(opts: DbOptions, shardCount: number): Promise<MigrateResult> {
  assertSchemaName(opts.schema);
  const client = new pg.Client({ ...clientConfig(opts) });
  await client.connect();
  try {
    const migrations = loadMigrations();
    const applied: string[] = [];
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${opts.schema}.schema_migrations (
      version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const m of migrations) {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
        const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
        if (done.rowCount === 0) {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          applied.push(m.name);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
    }
    await seedShards(client, shardCount);
    return { applied, version: migrations.at(-1)?.version ?? 0 };
  } finally {
    await client.end();
  }
}

async function seedShards(client: pg.Client, shardCount: number): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await client.query('INSERT INTO cluster (id, shard_count) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [shardCount]);
    const { rows } = await client.query<{ shard_count: number }>('SELECT shard_count FROM cluster WHERE id = 1');
    const count = rows[0].shard_count;
    await client.query('INSERT INTO shards (shard) SELECT generate_series(0, $1::int - 1) ON CONFLICT DO NOTHING', [count]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

export interface SchemaState {
  version: number;
  shardCount: number;
}

/**
 * Checks that the database is migrated to exactly what this code knows.
 * A database newer than the code is refused; an older one asks for `timelane migrate`.
 */
export async function checkSchema(db: pg.Pool, schema: string): Promise<SchemaState> {
  const known = loadMigrations().at(-1)?.version ?? 0;
  let version = 0;
  try {
    const { rows } = await db.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${schema}.schema_migrations`);
    version = rows[0]?.v ?? 0;
  } catch (err) {
    if ((err as { code?: string }).code !== '42P01') throw err;
  }
  if (version > known) throw new Error(`database schema "${schema}" is at version ${version}, newer than this timelane (${known}); upgrade timelane`);
  if (version < known) throw new Error(`database schema "${schema}" is at version ${version}, expected ${known}; run \`timelane migrate\``);
  const { rows } = await db.query<{ shard_count: number }>(`SELECT shard_count FROM ${schema}.cluster WHERE id = 1`);
  if (rows.length === 0) throw new Error(`database schema "${schema}" has no cluster row; run \`timelane migrate\``);
  return { version, shardCount: rows[0].shard_count };
}
