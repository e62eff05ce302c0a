/**
 * The bench's private infrastructure: a fresh database `tl_bench_<random>`
 * on the given Postgres (migrated, dropped at the end) and a unique Redis key
 * prefix (its keys deleted at the end).
 */
import { deleteKeysWithPrefix } from '../../ops/local/redis-keys.js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { migrate } from '../../daemon/db/migrate.js';
import type { Resources } from './resources.js';

export interface BenchDatabase {
  name: string;
  url: string;
  schema: string;
}

export function randomSuffix(): string {
  return randomBytes(5).toString('hex');
}

function withDatabase(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates and migrates a fresh database (with per-database settings); its drop is registered with `res`. */
export async function createBenchDatabase(adminUrl: string, shardCount: number, settings: [string, string][], res: Resources): Promise<BenchDatabase> {
  const name = `tl_bench_${randomSuffix()}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  res.defer(`drop database ${name}`, () => admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined));
  // Names and values are checked to be plain words by the flag parser.
  for (const [k, v] of settings) await admin(adminUrl, (c) => c.query(`ALTER DATABASE ${name} SET ${k} = '${v}'`));
  const db: BenchDatabase = { name, url: withDatabase(adminUrl, name), schema: 'timelane' };
  await migrate({ url: db.url, schema: db.schema }, shardCount);
  return db;
}

/** A unique key prefix; every key under it is deleted at the end. */
export function benchRedisPrefix(redisUrl: string, res: Resources): string {
  const prefix = `tl_bench_${randomSuffix()}:`;
  res.defer(`delete redis keys ${prefix}*`, () => deleteRedisPrefix(redisUrl, prefix));
  return prefix;
}

export const deleteRedisPrefix = (url: string, prefix: string): Promise<void> => deleteKeysWithPrefix(url, prefix);

/** Checks both servers answer before anything is started. */
export async function checkServers(adminUrl: string, redisUrl: string): Promise<void> {
  try {
    await admin(adminUrl, (c) => c.query('SELECT 1'));
  } catch (err) {
    throw new Error(`--database-url-admin ${adminUrl}: cannot connect (${(err as Error).message})`, { cause: err });
  }
  const r = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    throw new Error(`--redis-url ${redisUrl}: cannot connect (${(err as Error).message})`, { cause: err });
  } finally {
    r.disconnect();
  }
}
