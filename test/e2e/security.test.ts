/**
 * Security against real daemons, with certificates made for the test:
 * - TLS + bearer tokens: plaintext refused; no/unknown token UNAUTHENTICATED;
 *   each role may do exactly its part (schedule, work, read, admin), the
 *   rest is PERMISSION_DENIED; admin calls and refusals are audit-logged;
 *   a renewed certificate and an edited credentials file take effect without
 *   a restart; metrics over HTTPS; probes on the plaintext health port.
 * - mTLS: no client certificate, or one from another CA, cannot connect; a
 *   certificate's subject CN maps to its role.
 * - A production daemon refuses to start open.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { service as healthServiceDefinition } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, tlsCredentials, TimelaneClient, type Worker } from '../../clients/index.js';
import type { DeliveredRunInfo } from '../../clients/types.js';
import { cliPath, type DaemonProcess } from '../../ops/local/daemon-process.js';
import { hashToken } from '../../daemon/security/credentials-file.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { freePort, grpcError, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 2;
const TOKENS = { admin: 'tok-admin', scheduler: 'tok-sched', worker: 'tok-work', reader: 'tok-read', late: 'tok-late' };

let certs: TestCerts;
let dir: string;

beforeAll(() => {
  certs = makeTestCerts();
  dir = mkdtempSync(path.join(os.tmpdir(), 'timelane-sec-'));
});

afterAll(() => {
  certs?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function credentialsFile(name: string, doc: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

const tokenEntries = (extra: object[] = []) => ({
  tokens: [
    { name: 'ops', sha256: hashToken(TOKENS.admin), role: 'admin' },
    { name: 'billing-api', sha256: hashToken(TOKENS.scheduler), role: 'scheduler', namespace: 'billing' },
    { name: 'billing-worker', sha256: hashToken(TOKENS.worker), role: 'worker', namespace: 'billing' },
    { name: 'dashboards', sha256: hashToken(TOKENS.reader), role: 'reader', namespace: 'billing' },
    ...extra,
  ],
});

function client(address: string, opts: { token?: string; tls?: boolean; cert?: { cert: string; key: string } } = {}): TimelaneClient {
  const creds =
    opts.tls === false
      ? undefined
      : tlsCredentials({ ca: readFileSync(certs.caCert), ...(opts.cert ? { cert: readFileSync(opts.cert.cert), key: readFileSync(opts.cert.key) } : {}) });
  return track(new TimelaneClient(address, { credentials: creds, token: opts.token, timeoutMs: 5_000 }), `client ${address}`);
}

function closeAll(cs: TimelaneClient[]): void {
  for (const c of cs) {
    c.close();
    untrack(c);
  }
}

/** The subject CN of the certificate the daemon presents right now (a fresh TLS handshake). */
function servedCn(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ca: readFileSync(certs.caCert), ALPNProtocols: ['h2'], servername: 'localhost' }, () => {
      const cn = s.getPeerCertificate().subject?.CN;
      s.end();
      resolve(String(cn));
    });
    s.once('error', reject);
  });
}

describe('TLS and bearer tokens', () => {
  let db: TestDatabase;
  let daemon: DaemonProcess;
  let authFile: string;
  let liveCert: string;
  let liveKey: string;
  let metricsPort: number;
  let healthPort: number;
  const clients: TimelaneClient[] = [];
  const open = (o: Parameters<typeof client>[1]) => {
    const c = client(daemon.address, o);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    authFile = credentialsFile('tokens.json', tokenEntries());
    // The daemon reads its certificate from these paths; the reload test overwrites them.
    liveCert = path.join(dir, 'live.crt');
    liveKey = path.join(dir, 'live.key');
    copyFileSync(certs.serverCert, liveCert);
    copyFileSync(certs.serverKey, liveKey);
    metricsPort = await freePort();
    healthPort = await freePort();
    daemon = await startDaemon({
      databaseUrl: db.url,
      args: [
        '--tls-cert', liveCert, '--tls-key', liveKey, '--auth-file', authFile, '--tls-reload-ms', '200',
        '--metrics-address', `127.0.0.1:${metricsPort}`, '--health-address', `127.0.0.1:${healthPort}`,
      ],
    });
    expect(await waitForOwnedShards(open({ token: TOKENS.admin }), SHARDS)).toBe(true);
  });

  afterAll(async () => {
    closeAll(clients);
    await stopDaemon(daemon);
    await db?.drop();
  });

  it('refuses plaintext on the TLS port, and calls without a known token', async () => {
    expect((await grpcError(open({ tls: false, token: TOKENS.admin }).listShards())).code).toBe(grpc.status.UNAVAILABLE);
    const none = await grpcError(open({}).schedule({ queue: 'billing' }));
    expect(none.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(none.details).toMatch(/no credential/);
    const unknown = await grpcError(open({ token: 'not-a-token' }).listRuns({ pageSize: 1 }));
    expect(unknown.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(unknown.details).toMatch(/unknown token/);
  });

  it('each role does its part and nothing else', async () => {
    const scheduler = open({ token: TOKENS.scheduler });
    const reader = open({ token: TOKENS.reader });
    const workerOnly = open({ token: TOKENS.worker });
    const admin = open({ token: TOKENS.admin });

    // scheduler: schedule and read; no admin.
    const { run } = await scheduler.schedule({ queue: 'billing', delayMs: 200, payload: { invoice: 7 } });
    expect((await scheduler.getRun(run.id)).id).toBe(run.id);
    const denied = await grpcError(scheduler.setQueueLimits({ queue: 'billing', maxInFlight: 5, maxPerSecond: 0 }));
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(denied.details).toMatch(/billing-api \(role scheduler\) may not call Admin\/SetQueueLimits/);

    // reader: read only.
    expect((await reader.listShards()).length).toBe(SHARDS);
    expect((await grpcError(reader.schedule({ queue: 'billing' }))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await grpcError(reader.cancelJob(run.jobId))).code).toBe(grpc.status.PERMISSION_DENIED);

    // worker: receives and completes the run; may not schedule or read.
    expect((await grpcError(workerOnly.schedule({ queue: 'billing' }))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await grpcError(workerOnly.getRun(run.id))).code).toBe(grpc.status.PERMISSION_DENIED);
    const got: DeliveredRunInfo[] = [];
    const worker: Worker = track(
      createWorker({
        address: daemon.address,
        credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }),
        token: TOKENS.worker,
        queues: ['billing'],
        handler: (r) => void got.push(r),
      }),
      'worker',
    );
    try {
      expect(await waitUntil(() => got.some((r) => r.runId === run.id), 10_000)).toBe(true);
      expect(await waitUntil(async () => (await admin.getRun(run.id)).status === 'completed', 10_000)).toBe(true);
    } finally {
      await worker.close();
      untrack(worker);
    }

    // A reader's Work stream is refused at once.
    const readerErrors: Error[] = [];
    const readerWorker = track(
      createWorker({
        address: daemon.address,
        credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }),
        token: TOKENS.reader,
        queues: ['billing'],
        handler: () => undefined,
        onError: (err) => void readerErrors.push(err),
      }),
      'reader worker',
    );
    try {
      expect(await waitUntil(() => readerErrors.some((e) => /PERMISSION_DENIED|may not call Worker\/Work/.test(String(e))), 10_000)).toBe(true);
    } finally {
      await readerWorker.close();
      untrack(readerWorker);
    }

    // admin: everything.
    expect((await admin.setQueueLimits({ queue: 'billing', maxInFlight: 5, maxPerSecond: 0 })).maxInFlight).toBe(5);
  });

  it('audits every admin call and every refusal', async () => {
    const admin = open({ token: TOKENS.admin });
    await admin.setQueueLimits({ queue: 'audited', maxInFlight: 3, maxPerSecond: 0 });
    await grpcError(open({ token: TOKENS.reader }).setQueueLimits({ queue: 'audited', maxInFlight: 9, maxPerSecond: 0 }));
    const audit = () => daemon.logs.filter((l) => l.audit === true);
    expect(
      await waitUntil(
        () => audit().some((l) => l.event === 'admin' && l.method === '/timelane.v1.Admin/SetQueueLimits' && l.principal === 'ops' && l.code === 'OK'),
        5_000,
      ),
    ).toBe(true);
    // Log lines reach us through a pipe: wait for them.
    const refused = (match: (l: Record<string, unknown>) => boolean) => waitUntil(() => audit().some((l) => l.event === 'denied' && match(l)), 5_000);
    expect(await refused((l) => l.principal === 'dashboards' && l.code === 'PERMISSION_DENIED' && l.method === '/timelane.v1.Admin/SetQueueLimits')).toBe(true);
    expect(await refused((l) => l.code === 'UNAUTHENTICATED')).toBe(true);
    // The limit the reader tried to set did not change.
    expect((await admin.listQueueLimits()).find((q) => q.queue === 'audited')?.maxInFlight).toBe(3);
  });

  it('an edited credentials file takes effect without a restart', async () => {
    const late = open({ token: TOKENS.late });
    expect((await grpcError(late.listShards())).code).toBe(grpc.status.UNAUTHENTICATED);
    writeFileSync(authFile, JSON.stringify(tokenEntries([{ name: 'late-reader', sha256: hashToken(TOKENS.late), role: 'reader', namespace: 'billing' }])));
    expect(await waitUntil(async () => (await late.listShards().then(() => true, () => false)), 10_000, 100)).toBe(true);
    // A broken edit keeps the last good table in force.
    writeFileSync(authFile, '{ "tokens": [ broken');
    expect(await waitUntil(() => daemon.logs.some((l) => String(l.msg).includes('credentials file not reloaded')), 10_000)).toBe(true);
    expect((await late.listShards()).length).toBe(SHARDS);
  });

  it('a renewed certificate is served to new connections without a restart', async () => {
    expect(await servedCn(daemon.port)).toBe('server-1');
    copyFileSync(certs.server2Cert, liveCert);
    copyFileSync(certs.server2Key, liveKey);
    let cn = '';
    expect(await waitUntil(async () => (cn = await servedCn(daemon.port)) === 'server-2', 10_000, 100), `served ${cn}`).toBe(true);
    expect((await open({ token: TOKENS.admin }).listShards()).length).toBe(SHARDS);
  });

  it('serves metrics over HTTPS and health on the plaintext probe port', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port: metricsPort, path: '/metrics', ca: readFileSync(certs.caCert), servername: 'localhost' }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(text));
        })
        .once('error', reject);
    });
    expect(body).toMatch(/^timelane_runs_fired_total /m);
    const Health = grpc.makeClientConstructor(healthServiceDefinition, 'grpc.health.v1.Health');
    const health = track(new Health(`127.0.0.1:${healthPort}`, grpc.credentials.createInsecure()), 'health client');
    try {
      const check = (service: string) =>
        new Promise<string>((resolve, reject) =>
          (health as unknown as { Check: (r: { service: string }, cb: (e: Error | null, r?: { status: string }) => void) => void }).Check({ service }, (e, r) =>
            e ? reject(e) : resolve(String(r?.status)),
          ),
        );
      expect(await check('')).toBe('SERVING');
      expect(await check('timelane.liveness')).toBe('SERVING');
    } finally {
      health.close();
      untrack(health);
    }
  });
});

describe('mTLS: client certificates', () => {
  let db: TestDatabase;
  let daemon: DaemonProcess;
  const clients: TimelaneClient[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    const authFile = credentialsFile('identities.json', {
      identities: [
        { name: 'ops-cli', subject: 'ops-cli', role: 'admin' },
        { name: 'fraud-worker', subject: 'fraud-worker.internal', role: 'worker', namespace: 'fraud' },
      ],
    });
    daemon = await startDaemon({
      databaseUrl: db.url,
      args: ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-client-ca', certs.caCert, '--auth-file', authFile],
    });
  });

  afterAll(async () => {
    closeAll(clients);
    await stopDaemon(daemon);
    await db?.drop();
  });

  const open = (o: Parameters<typeof client>[1]) => {
    const c = client(daemon.address, o);
    clients.push(c);
    return c;
  };

  it('a client without a certificate, or with one from another CA, cannot connect', async () => {
    expect((await grpcError(open({}).listShards())).code).toBe(grpc.status.UNAVAILABLE);
    expect((await grpcError(open({ cert: certs.rogue }).listShards())).code).toBe(grpc.status.UNAVAILABLE);
  });

  it("the certificate's subject decides the role", async () => {
    const ops = open({ cert: certs.client('ops-cli') });
    expect(await waitForOwnedShards(ops, SHARDS)).toBe(true);
    const fraud = open({ cert: certs.client('fraud-worker.internal') });
    const denied = await grpcError(fraud.listShards());
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(denied.details).toMatch(/fraud-worker \(role worker\)/);
    // Signed by the CA but not listed: authenticated by TLS, unknown to timelane.
    const stranger = await grpcError(open({ cert: certs.client('stranger') }).listShards());
    expect(stranger.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(stranger.details).toMatch(/CN=stranger/);
  });
});

describe('a production daemon', () => {
  it('refuses to start open unless told --insecure', async () => {
    const db = await createTestDatabase(SHARDS);
    try {
      const env = { ...process.env };
      delete env.TIMELANE_INSECURE;
      delete env.TIMELANE_AUTH_FILE;
      const res = spawnSync(process.execPath, [cliPath(), 'daemon', '--database-url', db.url, '--grpc-address', '127.0.0.1:0', '--metrics-address', ''], {
        env,
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(res.status).toBe(1);
      expect(res.stderr).toMatch(/refusing to start open.*--auth-file.*--insecure/s);
    } finally {
      await db.drop();
    }
  });
});
