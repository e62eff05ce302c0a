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
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { service as healthServiceDefinition } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type DeliveredRunInfo, openWorkStream, TimelaneClient, tlsCredentials, type Worker, type WorkStream } from '@timelane/client';
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
    // As a Kubernetes Secret volume lays them out: `live` is a symlink to a
    // directory holding both files, swapped in one rename on renewal (the
    // certificate and its key change together, never one without the other).
    for (const [v, cert, key] of [['v1', certs.serverCert, certs.serverKey], ['v2', certs.server2Cert, certs.server2Key]] as const) {
      mkdirSync(path.join(dir, v));
      copyFileSync(cert, path.join(dir, v, 'tls.crt'));
      copyFileSync(key, path.join(dir, v, 'tls.key'));
    }
    symlinkSync('v1', path.join(dir, 'live'));
    liveCert = path.join(dir, 'live', 'tls.crt');
    liveKey = path.join(dir, 'live', 'tls.key');
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

  it('the CLI speaks TLS and sends its token, both from the environment', () => {
    const cli = (env: Record<string, string>, ...args: string[]) => {
      const clean = { ...process.env };
      for (const k of ['TIMELANE_TOKEN', 'TIMELANE_TOKEN_FILE', 'TIMELANE_TLS_CA', 'TIMELANE_TLS_CERT', 'TIMELANE_TLS_KEY']) delete clean[k];
      return spawnSync(process.execPath, [cliPath(), ...args, '--address', daemon.address], { env: { ...clean, ...env }, encoding: 'utf8', timeout: 30_000 });
    };
    const tokenFile = path.join(dir, 'cli-token');
    writeFileSync(tokenFile, `${TOKENS.reader}\n`);
    const ok = cli({ TIMELANE_TLS_CA: certs.caCert, TIMELANE_TOKEN_FILE: tokenFile }, 'jobs', '--json');
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    const noToken = cli({ TIMELANE_TLS_CA: certs.caCert }, 'jobs');
    expect(noToken.status).toBe(1);
    expect(noToken.stderr).toMatch(/UNAUTHENTICATED/);
    const weak = cli({ TIMELANE_TLS_CA: certs.caCert, TIMELANE_TOKEN: TOKENS.reader }, 'schedule', '--queue', 'billing', '--in', '1h');
    expect(weak.status).toBe(1);
    expect(weak.stderr).toMatch(/PERMISSION_DENIED/);
    const plaintext = cli({ TIMELANE_TOKEN: TOKENS.reader }, 'jobs');
    expect(plaintext.status).toBe(1);
    expect(plaintext.stderr).toMatch(/UNAVAILABLE/);
  });

  it('a worker token may discover the members to stream from', async () => {
    const got: DeliveredRunInfo[] = [];
    const errors: Error[] = [];
    const worker: Worker = track(
      createWorker({
        address: daemon.address,
        discover: true,
        credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }),
        token: TOKENS.worker,
        queues: ['billing-discover'],
        handler: (r) => void got.push(r),
        onError: (err) => void errors.push(err),
      }),
      'discovering worker',
    );
    try {
      const { run } = await open({ token: TOKENS.scheduler }).schedule({ queue: 'billing-discover', delayMs: 200 });
      expect(await waitUntil(() => got.some((r) => r.runId === run.id), 10_000)).toBe(true);
      expect(errors.filter((e) => /PERMISSION_DENIED/.test(String(e)))).toEqual([]);
    } finally {
      await worker.close();
      untrack(worker);
    }
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

  /** Opens a Work stream with `token`, applies `edit` to the credentials file, and expects the stream ended UNAUTHENTICATED. */
  async function expectStreamEndedBy(token: string, edit: () => void): Promise<void> {
    const s = track(openWorkStream(daemon.address, { queues: ['billing'], maxInFlight: 1 }, { credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }), token }), 'revocable stream');
    try {
      await s.subscribed();
      edit();
      const end = await Promise.race([s.finished, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      expect(end?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(end?.details).toMatch(/no longer admitted/);
    } finally {
      s.cancel();
      await s.finished;
      untrack(s);
    }
  }

  it('a credential removed from the file ends the Work streams it opened', async () => {
    const revocable = { name: 'temp-worker', sha256: hashToken('tok-temp'), role: 'worker', namespace: 'billing' };
    writeFileSync(authFile, JSON.stringify(tokenEntries([revocable])));
    const temp = open({ token: 'tok-temp' });
    expect(await waitUntil(async () => temp.listMembers().then(() => true, () => false), 10_000, 100)).toBe(true); // reloaded
    await expectStreamEndedBy('tok-temp', () => writeFileSync(authFile, JSON.stringify(tokenEntries())));
  });

  it('a token rotated out (same name, new hash) ends the Work streams opened with the old one', async () => {
    const entry = (token: string) => ({ name: 'rotating-worker', sha256: hashToken(token), role: 'worker', namespace: 'billing' });
    writeFileSync(authFile, JSON.stringify(tokenEntries([entry('tok-old')])));
    const old = open({ token: 'tok-old' });
    expect(await waitUntil(async () => old.listMembers().then(() => true, () => false), 10_000, 100)).toBe(true); // reloaded
    // Before: the stream stayed open (an entry of the same name, role and namespace was still there).
    await expectStreamEndedBy('tok-old', () => writeFileSync(authFile, JSON.stringify(tokenEntries([entry('tok-new')]))));
  });

  it('a renewed certificate is served to new connections without a restart', async () => {
    expect(await servedCn(daemon.port)).toBe('server-1');
    symlinkSync('v2', path.join(dir, 'live-next'));
    renameSync(path.join(dir, 'live-next'), path.join(dir, 'live'));
    let cn = '';
    // grpc-js reads the certificate and the key one after the other: a swap
    // between the two reads makes one reload a mismatched pair, and new
    // handshakes are refused until the next (README, Security). Such a reset is retried.
    const served = () => servedCn(daemon.port).catch((err: Error) => `(${err.message})`);
    expect(await waitUntil(async () => (cn = await served()) === 'server-2', 10_000, 100), `served ${cn}`).toBe(true);
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

  it('warns that bearer tokens travel in plaintext when given --auth-file without TLS', async () => {
    const db = await createTestDatabase(SHARDS);
    let d: DaemonProcess | undefined;
    try {
      const authFile = credentialsFile('plain-tokens.json', { tokens: [{ name: 'ops', sha256: hashToken('plain-token-0123456789'), role: 'admin' }] });
      d = await startDaemon({ databaseUrl: db.url, args: ['--auth-file', authFile] });
      expect(d.logs.some((l) => /bearer tokens travel in plaintext/.test(String(l.msg)))).toBe(true);
    } finally {
      await stopDaemon(d);
      await db.drop();
    }
  });
});

describe('namespaces isolate; quotas hold', () => {
  const NS_TOKENS = { admin: 'ns-admin', billing: 'ns-billing', fraud: 'ns-fraud', billingWorker: 'ns-billing-w', fraudWorker: 'ns-fraud-w', fraudReader: 'ns-fraud-r', limited: 'ns-limited' };
  let db: TestDatabase;
  let daemon: DaemonProcess;
  const clients: TimelaneClient[] = [];
  const streams: WorkStream[] = [];
  const open = (token: string) => {
    const c = client(daemon.address, { token });
    clients.push(c);
    return c;
  };
  const stream = (token: string, queues: string[]) => {
    const s = track(openWorkStream(daemon.address, { queues, maxInFlight: 10 }, { credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }), token }), 'work stream');
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    const entry = (name: string, token: string, role: string, namespace?: string) => ({ name, sha256: hashToken(token), role, ...(namespace ? { namespace } : {}) });
    const authFile = credentialsFile('ns-tokens.json', {
      tokens: [
        entry('ops', NS_TOKENS.admin, 'admin'),
        entry('billing-api', NS_TOKENS.billing, 'scheduler', 'billing'),
        entry('fraud-api', NS_TOKENS.fraud, 'scheduler', 'fraud'),
        entry('billing-worker', NS_TOKENS.billingWorker, 'worker', 'billing'),
        entry('fraud-worker', NS_TOKENS.fraudWorker, 'worker', 'fraud'),
        entry('fraud-reader', NS_TOKENS.fraudReader, 'reader', 'fraud'),
        entry('limited-api', NS_TOKENS.limited, 'scheduler', 'limited'),
      ],
    });
    const quotasFile = path.join(dir, 'quotas.json');
    writeFileSync(quotasFile, JSON.stringify({ limited: { max_payload_bytes: 100, schedules_per_second: 5, max_scheduled_runs: 8 } }));
    daemon = await startDaemon({
      databaseUrl: db.url,
      args: ['--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--auth-file', authFile, '--quotas-file', quotasFile],
    });
    expect(await waitForOwnedShards(open(NS_TOKENS.admin), SHARDS)).toBe(true);
  });

  afterAll(async () => {
    for (const s of streams) {
      s.cancel();
      await s.finished;
      untrack(s);
    }
    closeAll(clients);
    await stopDaemon(daemon);
    await db?.drop();
  });

  it('every Scheduler RPC across namespaces is denied or sees nothing', async () => {
    const billing = open(NS_TOKENS.billing);
    const fraud = open(NS_TOKENS.fraud);
    const admin = open(NS_TOKENS.admin);
    const far = Date.now() + 3_600_000;
    const b = await billing.schedule({ queue: 'invoices', at: far, payload: { secret: 'billing' } });
    const bRecurring = await billing.scheduleRecurring({ queue: 'invoices', recurrence: { everyMs: 3_600_000 } });
    const f = await fraud.schedule({ queue: 'invoices', at: far });
    // Same queue name, two namespaces: each caller sees its own name; the admin sees where they live.
    expect(b.job.namespace).toBe('billing');
    expect(b.job.queue).toBe('invoices');
    expect((await admin.getJob(b.job.id)).job.queue).toBe('billing/invoices');
    expect((await admin.getJob(f.job.id)).job.queue).toBe('fraud/invoices');

    const notFound = async (what: string, p: Promise<unknown>) => expect((await grpcError(p)).code, what).toBe(grpc.status.NOT_FOUND);
    await notFound('GetJob', fraud.getJob(b.job.id));
    await notFound('GetRun', fraud.getRun(b.run.id));
    await notFound('CancelJob', fraud.cancelJob(b.job.id));
    await notFound('RescheduleJob', fraud.rescheduleJob(b.job.id, { delayMs: 1_000 }));
    await notFound('PauseJob', fraud.pauseJob(bRecurring.job.id));
    await notFound('ResumeJob', fraud.resumeJob(bRecurring.job.id));
    await notFound('UpdateJob', fraud.updateJob(bRecurring.job.id, { priority: 5 }));
    await notFound('TriggerJob', fraud.triggerJob(bRecurring.job.id));
    await notFound('BackfillJob', fraud.backfillJob(bRecurring.job.id, { from: Date.now() - 10_000, to: Date.now() }));
    await notFound('ReplayRuns', fraud.replayRuns({ runIds: [b.run.id] }));
    const denied = async (what: string, p: Promise<unknown>) => expect((await grpcError(p)).code, what).toBe(grpc.status.PERMISSION_DENIED);
    await denied('Schedule into another namespace', fraud.schedule({ queue: 'invoices', namespace: 'billing' }));
    await denied('ScheduleBatch into another namespace', fraud.scheduleBatch([{ queue: 'invoices' }, { queue: 'invoices', namespace: 'billing' }]));
    expect((await fraud.listJobs({ pageSize: 1000 })).jobs).toHaveLength(1); // the refused batch wrote nothing
    await denied('ListJobs of another namespace', fraud.listJobs({ namespace: 'billing' }));
    // Lists show only the caller's own, queues by their names in the namespace.
    expect((await fraud.listQueues()).queues).toEqual(['invoices']);
    // A bound caller pages through its own queues by their names in its namespace, one at a time.
    await billing.schedule({ queue: 'refunds', at: far });
    const paged: string[] = [];
    let token: string | undefined;
    do {
      const p = await billing.listQueues({ pageSize: 1, pageToken: token });
      paged.push(...p.queues);
      token = p.nextPageToken || undefined;
    } while (token);
    expect(paged).toEqual(['invoices', 'refunds']);
    expect((await admin.listQueues()).queues).toEqual(expect.arrayContaining(['billing/invoices', 'fraud/invoices']));
    const fraudJobs = (await fraud.listJobs({ pageSize: 1000 })).jobs.map((j) => j.id);
    expect(fraudJobs).toEqual([f.job.id]);
    const fraudRuns = (await fraud.listRuns({ pageSize: 1000 })).runs;
    expect(fraudRuns.map((r) => r.jobId)).toEqual([f.job.id]);
    expect(fraudRuns[0].queue).toBe('invoices');
    expect((await fraud.listRuns({ queue: 'invoices', pageSize: 1000 })).runs.map((r) => r.id)).toEqual([f.run.id]);
    expect((await fraud.listDeadRuns({})).runs).toEqual([]);
    // Nothing of billing's changed.
    expect((await billing.getJob(b.job.id)).job.status).toBe('active');
    expect((await billing.getJob(bRecurring.job.id)).job.status).toBe('active');
  });

  it("a bound caller's keyed batch may name its own namespace or leave it empty: both are its own", async () => {
    const billing = open(NS_TOKENS.billing);
    const far = Date.now() + 3_600_000;
    const inputs = [
      { queue: 'keyed', namespace: 'billing', at: far },
      { queue: 'keyed', at: far },
    ];
    const first = await billing.scheduleBatch(inputs, { batchId: 'billing-keyed' });
    expect(first).toHaveLength(2);
    for (const s of first) expect((await billing.getJob(s.job.id)).job.namespace).toBe('billing');
    // Sent again: the same batch, replayed.
    const again = await billing.scheduleBatch(inputs, { batchId: 'billing-keyed' });
    expect(again.map((s) => s.job.id)).toEqual(first.map((s) => s.job.id));
    // Two namespaces in one keyed batch are still refused, for an unbound caller.
    const admin = open(NS_TOKENS.admin);
    const err = await grpcError(admin.scheduleBatch([{ queue: 'keyed', namespace: 'billing', at: far }, { queue: 'keyed', at: far }], { batchId: 'admin-mixed' }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^requests\[1\]\.namespace: must be "billing" like requests\[0\]/);
  });

  it("a worker gets only its namespace's runs, and cannot answer another's", async () => {
    const billing = open(NS_TOKENS.billing);
    const fraud = open(NS_TOKENS.fraud);
    const admin = open(NS_TOKENS.admin);
    const billingStream = stream(NS_TOKENS.billingWorker, ['payouts']);
    const fraudStream = stream(NS_TOKENS.fraudWorker, ['payouts']);
    expect((await billingStream.subscribed()).queues).toEqual(['payouts']);
    await fraudStream.subscribed();
    const b = await billing.schedule({ queue: 'payouts', delayMs: 100 });
    const f = await fraud.schedule({ queue: 'payouts', delayMs: 100 });
    const gotB = await billingStream.nextRun();
    const gotF = await fraudStream.nextRun();
    expect([gotB.runId, gotB.queue]).toEqual([b.run.id, 'payouts']);
    expect([gotF.runId, gotF.queue]).toEqual([f.run.id, 'payouts']);

    // The fraud worker forges a Complete for billing's run (its fence and delivery are right).
    fraudStream.complete({ runId: gotB.runId, fence: String(gotB.fence), delivery: gotB.delivery, shard: gotB.shard });
    const forged = await fraudStream.nextAck();
    expect([forged.runId, forged.codeName]).toEqual([gotB.runId, 'NOT_FOUND']);
    expect((await admin.getRun(b.run.id)).status).toBe('fired');
    // Its own answers still work; billing's worker completes its run.
    fraudStream.complete({ runId: gotF.runId, fence: String(gotF.fence), delivery: gotF.delivery, shard: gotF.shard });
    expect((await fraudStream.nextAck()).codeName).toBe('OK');
    billingStream.complete({ runId: gotB.runId, fence: String(gotB.fence), delivery: gotB.delivery, shard: gotB.shard });
    expect((await billingStream.nextAck()).codeName).toBe('OK');
    expect((await admin.getRun(b.run.id)).status).toBe('completed');
  });

  it("workflows: another namespace's runs are NOT_FOUND or unlisted; steps run on the namespace's own queues", async () => {
    const billing = open(NS_TOKENS.billing);
    const fraud = open(NS_TOKENS.fraud);
    const admin = open(NS_TOKENS.admin);
    const definition = { name: 'nightly', steps: [{ name: 'extract', queue: 'etl' }, { name: 'load', queue: 'etl', after: ['extract'] }] };
    const run = await billing.startWorkflow({ definition, delayMs: 3_600_000 });
    expect(run.namespace).toBe('billing');
    const notFound = async (what: string, p: Promise<unknown>) => expect((await grpcError(p)).code, what).toBe(grpc.status.NOT_FOUND);
    await notFound('GetWorkflowRun', fraud.getWorkflowRun(run.id));
    await notFound('RetryWorkflowRun', fraud.retryWorkflowRun(run.id));
    await notFound('CancelWorkflowRun', fraud.cancelWorkflowRun(run.id));
    expect((await fraud.listWorkflowRuns({})).runs).toEqual([]);
    expect((await grpcError(fraud.listWorkflowRuns({ namespace: 'billing' }))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await grpcError(fraud.startWorkflow({ namespace: 'billing', definition }))).code).toBe(grpc.status.PERMISSION_DENIED);
    // The owner sees its steps on its own queue names; the admin sees where they live.
    const mine = await billing.getWorkflowRun(run.id);
    expect(mine.steps.map((st) => st.queue)).toEqual(['etl', 'etl']);
    expect((await admin.getWorkflowRun(run.id)).steps.map((st) => st.queue)).toEqual(['billing/etl', 'billing/etl']);
    expect((await billing.listWorkflowRuns({})).runs.map((r) => r.id)).toEqual([run.id]);
    // StartWorkflows: every start acts in the caller's namespace; one naming another refuses the whole call, naming it.
    const across = await grpcError(fraud.startWorkflows([{ definition }, { namespace: 'billing', definition }]));
    expect(across.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(across.details).toMatch(/^starts\[1\]\.namespace: /);
    expect((await fraud.listWorkflowRuns({})).runs).toEqual([]);
    const [batched] = await billing.startWorkflows([{ definition, delayMs: 3_600_000 }]);
    expect(batched.namespace).toBe('billing');
    expect((await admin.getWorkflowRun(batched.id)).steps.map((st) => st.queue)).toEqual(['billing/etl', 'billing/etl']);
    await notFound('GetWorkflowRun (batched)', fraud.getWorkflowRun(batched.id));

    // A scheduled start of billing's own workflow cannot be re-pointed at fraud's: its payload is not the caller's to set.
    await billing.putWorkflow(definition);
    const { scheduleJobId } = await billing.scheduleWorkflow({ workflow: 'nightly', recurrence: { everyMs: 3_600_000 } });
    const forged = await grpcError(billing.updateJob(scheduleJobId, { payload: { namespace: 'fraud', name: 'payout', version: 0, maxInFlight: 0 } }));
    expect(forged.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(forged.details).toMatch(/^payload: /);
  });

  it("queue limits: a namespace's reader sees its own, under its own names", async () => {
    const admin = open(NS_TOKENS.admin);
    await admin.setQueueLimits({ queue: 'billing/invoices', maxInFlight: 4, maxPerSecond: 0 });
    await admin.setQueueLimits({ queue: 'fraud/alerts', maxInFlight: 2, maxPerSecond: 0 });
    expect(await open(NS_TOKENS.fraudReader).listQueueLimits()).toEqual([{ queue: 'alerts', maxInFlight: 2, maxPerSecond: 0 }]);
    expect((await admin.listQueueLimits()).map((l) => l.queue).sort()).toEqual(['billing/invoices', 'fraud/alerts']);
  });

  it('quotas: RESOURCE_EXHAUSTED naming the quota, nothing written', async () => {
    const limited = open(NS_TOKENS.limited);
    const far = Date.now() + 3_600_000;
    const exhausted = async (p: Promise<unknown>, quota: string) => {
      const e = await grpcError(p);
      expect(e.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(e.details).toContain(quota);
    };
    const jobs = async () => (await limited.listJobs({ pageSize: 1000 })).jobs.length;
    await exhausted(limited.schedule({ queue: 'q', at: far, payload: Buffer.alloc(200) }), 'max_payload_bytes');
    await exhausted(limited.scheduleBatch(Array.from({ length: 6 }, () => ({ queue: 'q', at: far }))), 'schedules_per_second');
    expect(await jobs()).toBe(0);
    // Within the rate (5/s): schedules go through once tokens are back.
    let made = 0;
    expect(
      await waitUntil(async () => {
        const ok = await limited.schedule({ queue: 'q', at: far }).then(() => true, (e: grpc.ServiceError) => (e.code === grpc.status.RESOURCE_EXHAUSTED ? false : Promise.reject(e)));
        if (ok) made++;
        return made === 8;
      }, 15_000, 50),
    ).toBe(true);
    expect(await jobs()).toBe(8);
    // 8 runs wait to fire: the 9th is over max_scheduled_runs, whatever the rate.
    let last: grpc.ServiceError | undefined;
    expect(
      await waitUntil(async () => {
        last = await grpcError(limited.schedule({ queue: 'q', at: far }));
        return last.details.includes('max_scheduled_runs');
      }, 5_000, 100),
    ).toBe(true);
    expect(last!.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await jobs()).toBe(8);
  });
});
