/**
 * An empty database for a Postgres-backed peer (pg-boss, graphile-worker):
 * `tl_peers_<system>_<random>` on the admin server, dropped WITH (FORCE) by
 * the Resources scope it is registered with (at the end, on error, on
 * Ctrl-C). The peer installs its own schema into it.
 */
import pg from 'pg';
import { randomSuffix } from '../infra.js';
import type { Resources } from '../resources.js';

export interface PeerDatabase {
  name: string;
  url: string;
}

async function onAdmin(adminUrl: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function createPeerDatabase(adminUrl: string, label: string, res: Resources): Promise<PeerDatabase> {
  const name = `tl_peers_${label}_${randomSuffix()}`;
  await onAdmin(adminUrl, `CREATE DATABASE ${name}`);
  res.defer(`drop database ${name}`, () => onAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return { name, url: u.toString() };
}
