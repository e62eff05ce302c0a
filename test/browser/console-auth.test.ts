/**
 * The web console on a secured daemon (TLS with a test CA, bearer tokens in
 * a credentials file), in headless Chromium: the console is served over
 * HTTPS with the daemon's certificate and calls the gRPC port over TLS; it
 * asks for a token when the daemon refuses a call for want of one; a reader
 * sees the pages but may not pause a job (the daemon's PERMISSION_DENIED
 * shown as is, the job untouched), a scheduler may; a reader bound to a
 * namespace sees only that namespace's jobs and queues. The console never
 * answers without a token the daemon accepted.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimelaneClient, tlsCredentials } from '@timelane/client';
import { hashToken } from '../../daemon/security/credentials-file.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { closeBrowser, HAS_CHROMIUM, launchBrowser, screenshot, SKIP_MESSAGE } from '../helpers/browser.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, startDaemon, stopDaemon } from '../helpers/e2e.js';
import { track } from '../helpers/tracked.js';

const TOKENS = {
  reader: 'console-reader-token-0123456789',
  scheduler: 'console-scheduler-token-0123456789',
  admin: 'console-admin-token-0123456789',
  billingReader: 'console-billing-reader-token-0123456789',
  billingScheduler: 'console-billing-scheduler-token-0123456789',
};

if (!HAS_CHROMIUM) console.warn(SKIP_MESSAGE);

describe.skipIf(!HAS_CHROMIUM)('web console on a daemon with TLS and tokens', () => {
  let dir: string;
  let certs: TestCerts;
  let db: TestDatabase;
  let daemon: DaemonProcess | undefined;
  let admin: TimelaneClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleUrl = '';
  let jobId = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tl-console-auth-'));
    certs = makeTestCerts();
    const authFile = path.join(dir, 'credentials.json');
    writeFileSync(
      authFile,
      JSON.stringify({
        tokens: [
          { name: 'ops', sha256: hashToken(TOKENS.admin), role: 'admin' },
          { name: 'dashboards', sha256: hashToken(TOKENS.reader), role: 'reader', namespace: '*' },
          { name: 'oncall', sha256: hashToken(TOKENS.scheduler), role: 'scheduler', namespace: '*' },
          { name: 'billing-dashboards', sha256: hashToken(TOKENS.billingReader), role: 'reader', namespace: 'billing' },
          { name: 'billing-api', sha256: hashToken(TOKENS.billingScheduler), role: 'scheduler', namespace: 'billing' },
        ],
      }),
    );
    db = await createTestDatabase(2);
    [daemon, browser] = await Promise.all([
      startDaemon({
        databaseUrl: db.url,
        args: ['--member-id', 'console-auth', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--auth-file', authFile, '--console-address', '127.0.0.1:0'],
        env: { TIMELANE_TLS_CA: certs.caCert },
      }),
      launchBrowser(),
    ]);
    consoleUrl = String(daemon.logs.find((l) => l.msg === 'timelane daemon started')?.console ?? '');
    admin = track(new TimelaneClient(daemon.address, { credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }), token: TOKENS.admin, timeoutMs: 10_000 }), 'admin client');
    jobId = (await admin.scheduleRecurring({ queue: 'console-auth', recurrence: { cron: '0 4 * * *' } })).job.id;
    // The test CA is not the system's: Chromium is told to accept it (the daemon's side is checked by the API calls working).
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1360, height: 900 } });
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
    await closeBrowser(browser);
    closeClient(admin);
    await stopDaemon(daemon);
    await db?.drop();
    certs?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS and answers no API call without a token the daemon accepts', async () => {
    expect(consoleUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    const status = async (p: string, token?: string): Promise<number> =>
      page.evaluate(async ([url, t]) => (await fetch(url, { headers: t ? { authorization: `Bearer ${t}` } : {} })).status, [`${consoleUrl}api/${p}`, token ?? ''] as const);
    await page.goto(`${consoleUrl}#/overview`);
    expect(await status('operations')).toBe(401);
    expect(await status('operations', 'not-a-token')).toBe(401);
    expect(await status('shards', 'not-a-token')).toBe(401);
    expect(await status('operations', TOKENS.reader)).toBe(200);
    // Background actions (202) are proven first: before, anyone got 202 and filled the operation log.
    const action = async (p: string, token: string): Promise<number> =>
      page.evaluate(
        async ([url, t]) => (await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: '{}' })).status,
        [`${consoleUrl}api/${p}`, token] as const,
      );
    expect(await action('rebalance', 'not-a-token')).toBe(401);
    expect(await action('rebalance', TOKENS.reader)).toBe(403);
    expect(await action('members/console-auth/drain', TOKENS.scheduler)).toBe(403);
    const ops = await page.evaluate(async ([url, t]) => (await fetch(url, { headers: { authorization: `Bearer ${t}` } })).json(), [`${consoleUrl}api/operations`, TOKENS.admin] as const);
    expect(ops).toEqual([]);
    // A malformed %-escape in a file path is not found (was a 500 and a stack trace in the log).
    expect(await page.evaluate(async (url) => (await fetch(url)).status, `${consoleUrl}%E0`)).toBe(404);
  });

  it('asks for a token; a reader sees the job but may not pause it; a scheduler may', async () => {
    await page.goto(`${consoleUrl}#/jobs/${jobId}`);
    await page.waitForSelector('[data-testid=token-form]');
    expect(await page.textContent('[data-testid=token-form]')).toContain('requires a bearer token');
    await screenshot(page, 'auth-token-form');

    await page.fill('[data-testid=token-form] input[name=token]', TOKENS.reader);
    await page.click('[data-testid=token-form] button[type=submit]');
    await page.waitForSelector('[data-testid=job-spec]');
    expect(await page.$('[data-testid=token-form]')).toBeNull();
    expect(await page.textContent('[data-testid=job-spec]')).toContain('0 4 * * *');
    await page.click('button:text("Pause")');
    await page.waitForSelector('[role=alert]:has-text("HTTP 403")');
    expect(await page.textContent('[role=alert]')).toMatch(/dashboards \(role reader\) may not call .*PauseJob: it needs schedule/);
    expect((await admin.getJob(jobId)).job.status).toBe('active');
    await screenshot(page, 'auth-reader-refused');

    await page.click('[data-testid=sign-out]');
    await page.waitForSelector('[data-testid=token-form]');
    await page.fill('[data-testid=token-form] input[name=token]', TOKENS.scheduler);
    await page.click('[data-testid=token-form] button[type=submit]');
    await page.waitForSelector('[data-testid=job-spec]');
    await page.click('button:text("Pause")');
    await page.waitForSelector('[data-testid=job-status] .badge.paused');
    expect((await admin.getJob(jobId)).job.status).toBe('paused');
  });

  it('a reader bound to a namespace sees only its namespace through the console', async () => {
    // Scheduled by a billing credential: stored as queue billing/invoices, which only billing's callers see as "invoices".
    const billingApi = track(new TimelaneClient(daemon!.address, { credentials: tlsCredentials({ ca: readFileSync(certs.caCert) }), token: TOKENS.billingScheduler, timeoutMs: 10_000 }), 'billing client');
    let billingJob: string;
    try {
      billingJob = (await billingApi.schedule({ queue: 'invoices', delayMs: 3_600_000 })).job.id;
    } finally {
      closeClient(billingApi);
    }
    const get = async (p: string, token: string): Promise<unknown> =>
      page.evaluate(async ([url, t]) => (await fetch(url, { headers: { authorization: `Bearer ${t}` } })).json(), [`${consoleUrl}api/${p}`, token] as const);
    const billingJobs = (await get('jobs', TOKENS.billingReader)) as { jobs: { id: string; queue: string }[] };
    expect(billingJobs.jobs.map((j) => j.id)).toEqual([billingJob]);
    expect(billingJobs.jobs[0].queue).toBe('invoices');
    const allJobs = (await get('jobs', TOKENS.reader)) as { jobs: { id: string; queue: string }[] };
    expect(allJobs.jobs.map((j) => j.id).sort()).toEqual([billingJob, jobId].sort());
    expect(allJobs.jobs.find((j) => j.id === billingJob)?.queue).toBe('billing/invoices');
    const billingQueues = (await get('queues', TOKENS.billingReader)) as { queues: { queue: string }[] };
    expect(billingQueues.queues.map((q) => q.queue)).toEqual(['invoices']);
    // Another namespace's job is not found, not forbidden: its existence is not told.
    expect(await page.evaluate(async ([url, t]) => (await fetch(url, { headers: { authorization: `Bearer ${t}` } })).status, [`${consoleUrl}api/jobs/${jobId}`, TOKENS.billingReader] as const)).toBe(404);
    // A search by the qualified name, as an every-namespace caller sees it.
    const runs = (await get('runs?queue=billing%2Finvoices', TOKENS.reader)) as { runs: { jobId: string }[] };
    expect(runs.runs.map((r) => r.jobId)).toEqual([billingJob]);
  });
});
