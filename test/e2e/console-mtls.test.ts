/**
 * The web console on a daemon under mTLS without tokens (`--tls-client-ca`
 * alone: every certificate the CA signed may call, as admin). The console
 * calls its gRPC port as itself, so whoever reaches its port acts with the
 * console's certificate. A daemon configured through the environment has
 * its own server certificate in TIMELANE_TLS_CERT / TIMELANE_TLS_KEY — the
 * names the CLI reads for its client certificate — and the console used to
 * present that pair: a server certificate without an extended key usage
 * (good for clients too) made every visitor admin, with no warning. The
 * console now presents only TIMELANE_CONSOLE_TLS_CERT / _KEY, or the CLI's
 * names when they are not the daemon's own certificate.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimelaneClient, tlsCredentials } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, startDaemon, stopDaemon } from '../helpers/e2e.js';
import { track } from '../helpers/tracked.js';

const WARNING = /web console: the gRPC port requires client certificates/;

let certs: TestCerts;
let db: TestDatabase;
let jobId = '';

/** GET on the console over HTTPS (its certificate checked against the test CA), with no certificate and no token. */
function consoleGet(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${base}${path}`, { ca: readFileSync(certs.caCert) }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** A daemon whose listeners are configured through the environment, as ops/systemd/timelane.env does it. */
async function envConfiguredDaemon(memberId: string, extraEnv: Record<string, string> = {}): Promise<{ daemon: DaemonProcess; base: string }> {
  const daemon = await startDaemon({
    databaseUrl: db.url,
    args: ['--member-id', memberId, '--tls-client-ca', certs.caCert, '--console-address', '127.0.0.1:0'],
    env: { TIMELANE_TLS_CERT: certs.serverAnyCert, TIMELANE_TLS_KEY: certs.serverAnyKey, TIMELANE_TLS_CA: certs.caCert, ...extraEnv },
  });
  const base = String(daemon.logs.find((l) => l.msg === 'timelane daemon started')?.console ?? '').replace(/\/$/, '');
  expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  return { daemon, base };
}

beforeAll(async () => {
  certs = makeTestCerts();
  db = await createTestDatabase(2);
});

afterAll(async () => {
  await db?.drop();
  certs?.remove();
});

describe('web console under mTLS, daemon configured through the environment', () => {
  it("does not call as the daemon's own certificate: a visitor with no certificate and no token reads nothing, and the start warns", async () => {
    const { daemon, base } = await envConfiguredDaemon('console-mtls-1');
    try {
      const me = certs.client('scheduler-app');
      const client = track(new TimelaneClient(daemon.address, { credentials: tlsCredentials({ ca: readFileSync(certs.caCert), cert: readFileSync(me.cert), key: readFileSync(me.key) }) }), 'mtls client');
      try {
        jobId = (await client.schedule({ queue: 'console-mtls', delayMs: 3_600_000 })).job.id;
      } finally {
        closeClient(client);
      }
      const res = await consoleGet(base, '/api/jobs');
      expect(res.status).not.toBe(200);
      expect(res.body).not.toContain(jobId);
      expect(daemon.logs.some((l) => WARNING.test(String(l.msg)))).toBe(true);
    } finally {
      await stopDaemon(daemon);
    }
  });

  it('calls as TIMELANE_CONSOLE_TLS_CERT / _KEY when given: the jobs are shown, and no warning', async () => {
    const consoleCert = certs.client('console');
    const { daemon, base } = await envConfiguredDaemon('console-mtls-2', { TIMELANE_CONSOLE_TLS_CERT: consoleCert.cert, TIMELANE_CONSOLE_TLS_KEY: consoleCert.key });
    try {
      const res = await consoleGet(base, '/api/jobs');
      expect(res.status).toBe(200);
      expect(res.body).toContain(jobId);
      expect(daemon.logs.some((l) => WARNING.test(String(l.msg)))).toBe(false);
    } finally {
      await stopDaemon(daemon);
    }
  });
});
