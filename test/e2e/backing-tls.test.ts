/**
 * TLS to the backing services: a private PostgreSQL with ssl=on, reached
 * with `sslmode=verify-full` (the server certificate checked against our CA),
 * and a private Redis reached only over its TLS port with a client
 * certificate (tls-auth-clients yes). The daemon takes its shard leases in
 * Redis, every one of its Postgres connections is encrypted, and a run fires
 * end to end.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, freePort, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { PrivateRedis } from '../helpers/private-redis.js';

const SHARDS = 4;
const PREFIX = `tl-tls-${process.pid}:`;

let certs: TestCerts;
let pgDir: string;
let pgx: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let tlsPort = 0;
let db: TestDatabase | undefined;
let daemon: DaemonProcess | undefined;

beforeAll(async () => {
  certs = makeTestCerts();
  // Postgres reads its key as its own user, and only from a file no one else can read.
  pgDir = mkdtempSync(path.join(os.tmpdir(), 'tl-pg-tls-'));
  chmodSync(pgDir, 0o755);
  const cert = path.join(pgDir, 'server.crt');
  const key = path.join(pgDir, 'server.key');
  copyFileSync(certs.serverCert, cert);
  copyFileSync(certs.serverKey, key);
  chmodSync(key, 0o600);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(cert, uid, gid);
    chownSync(key, uid, gid);
  }
  pgx = await PrivatePostgres.create({ settings: { ssl: 'on', ssl_cert_file: cert, ssl_key_file: key } });
  await pgx.start();
  db = await createTestDatabase(SHARDS, pgx.url);

  tlsPort = await freePort();
  redis = await PrivateRedis.start({
    extraArgs: ['--tls-port', String(tlsPort), '--tls-cert-file', certs.serverCert, '--tls-key-file', certs.serverKey, '--tls-ca-cert-file', certs.caCert, '--tls-auth-clients', 'yes'],
  });
});

afterAll(async () => {
  await stopDaemon(daemon);
  await db?.drop();
  await redis?.close();
  if (pgx) await pgx.destroy();
  certs?.remove();
  if (pgDir) rmSync(pgDir, { recursive: true, force: true });
});

describe('TLS to PostgreSQL and Redis', () => {
  it('leases in Redis over mTLS, every Postgres connection encrypted and verified, and a run fires', async () => {
    const client = certs.client('timelane-daemon');
    const url = new URL(db!.url);
    url.searchParams.set('sslmode', 'verify-full');
    url.searchParams.set('sslrootcert', certs.caCert);
    daemon = await startDaemon({
      databaseUrl: url.toString(),
      redisUrl: `rediss://127.0.0.1:${tlsPort}`,
      args: ['--redis-tls-ca', certs.caCert, '--redis-tls-cert', client.cert, '--redis-tls-key', client.key, '--redis-prefix', PREFIX, '--member-id', 'tls-a'],
    });
    const api = openClient(daemon.address);
    const worker = collectRuns({ address: daemon.address, queues: ['tls'] });
    try {
      expect(await waitForOwnedShards(api, SHARDS)).toBe(true);
      const { run } = await api.schedule({ queue: 'tls', delayMs: 200 });
      expect(await waitUntil(() => worker.recorder.byRun.has(run.id), 10_000)).toBe(true);

      // The leases live in the TLS Redis (read back over its plain port, which the daemon was not given).
      const plain = new Redis(redis!.url, { lazyConnect: true });
      await plain.connect();
      try {
        expect((await plain.keys(`${PREFIX}*`)).length).toBeGreaterThan(0);
        const clients = await plain.client('LIST');
        // Every connection but ours came in over TLS: redis lists a TLS client with a `laddr` on the TLS port.
        const lines = String(clients).split('\n').filter(Boolean);
        const daemons = lines.filter((l) => !l.includes(`laddr=127.0.0.1:${redis!.port}`));
        expect(daemons.length).toBeGreaterThan(0);
        expect(daemons.every((l) => l.includes(`laddr=127.0.0.1:${tlsPort}`))).toBe(true);
      } finally {
        plain.disconnect();
      }

      // Postgres: the daemon's connections, seen from the server, are all TLS.
      const admin = new pg.Client({ connectionString: pgx!.url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ tls: string; total: string }>(
          `SELECT count(*) FILTER (WHERE s.ssl) AS tls, count(*) AS total
           FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = $1 AND a.pid <> pg_backend_pid()`,
          [url.pathname.slice(1)],
        );
        expect(Number(rows[0].total)).toBeGreaterThan(2);
        expect(Number(rows[0].tls)).toBe(Number(rows[0].total));
      } finally {
        await admin.end();
      }
    } finally {
      await worker.close();
      closeClient(api);
    }
  });
});
