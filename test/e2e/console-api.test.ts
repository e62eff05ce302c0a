/**
 * End to end: the web console's HTTP surface against a real daemon (single
 * node, Postgres leases), without a browser. Bad query parameters and bodies
 * are refused with 400 naming the parameter; gRPC errors map to HTTP
 * statuses in one place (NOT_FOUND → 404, FAILED_PRECONDITION → 409 on the
 * operation); the front end and its vendored libraries are served from
 * dist, nothing outside it; the console is off unless asked for, and a
 * console port in use fails the start saying what to do.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../daemon/config.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, openClient, startDaemon, stopDaemon } from '../helpers/e2e.js';

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let base: string;

interface ErrorBody {
  error: string;
  param?: string;
}

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.json() };
}

async function post(path: string, body: string, contentType = 'application/json'): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': contentType } });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  db = await createTestDatabase(2);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'console-api', '--console-address', '127.0.0.1:0'] });
  base = String(daemon.logs.find((l) => l.msg === 'timelane daemon started')?.console ?? '').replace(/\/$/, '');
});

afterAll(async () => {
  await stopDaemon(daemon);
  await db?.drop();
});

describe('web console JSON API', () => {
  it('is off unless --console-address is given (timelane daemon)', () => {
    expect(resolveConfig({ databaseUrl: 'postgres://x' }, {}).consoleAddress).toBe('');
    expect(() => resolveConfig({ databaseUrl: 'postgres://x', consoleAddress: 'nope' }, {})).toThrow(/--console-address: must be host:port/);
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a console port in use fails the start with what to do, before any shard is taken', async () => {
    const taken = new URL(base).port;
    const err = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'console-api-2', '--console-address', `127.0.0.1:${taken}`] }).then(
      () => null,
      (e: unknown) => String(e),
    );
    expect(err).toMatch(/--console-address 127\.0\.0\.1:\d+: cannot listen \(the port is in use by another process\); pick another/);
  });

  it('answers 400 naming the parameter for a bad query parameter', async () => {
    const cases: [string, string, RegExp][] = [
      ['/api/runs?status=bogus', 'status', /must be one of scheduled, fired/],
      ['/api/runs?limit=0', 'limit', /integer in 1\.\.1000/],
      ['/api/runs?from=yesterday', 'from', /ISO-8601 instant or epoch milliseconds/],
      ['/api/runs?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'to', /must not be before from/],
      ['/api/runs?job=not-a-uuid', 'job', /UUID/],
      ['/api/runs?id=-3', 'id', /positive integer/],
      ['/api/runs?qeueu=a', 'qeueu', /unknown parameter/],
      ['/api/overview?minutes=99', 'minutes', /1\.\.10/],
      ['/api/jobs?kind=weekly', 'kind', /once, cron, interval/],
      ['/api/dead?queue=a%20b', 'queue', /characters of/],
      ['/api/runs?status=dead&status=fired', 'status', /more than once/],
    ];
    for (const [path, param, rule] of cases) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect((body as ErrorBody).param, path).toBe(param);
      expect((body as ErrorBody).error, path).toMatch(rule);
    }
  });

  it('answers 400 for bad bodies, 415 for non-JSON posts, 404 and 405 for unknown endpoints and methods', async () => {
    const replayNone = await post('/api/dead/replay', JSON.stringify({ runIds: [] }));
    expect(replayNone.status).toBe(400);
    expect((replayNone.body as ErrorBody).param).toBe('runIds');
    const replayBad = await post('/api/dead/replay', JSON.stringify({ runIds: ['12', 'x'] }));
    expect((replayBad.body as ErrorBody).param).toBe('runIds[1]');
    expect((await post('/api/dead/replay', '{not json')).status).toBe(400);
    expect((await post('/api/rebalance', '{}', 'text/plain')).status).toBe(415);
    expect((await get('/api/nothing')).status).toBe(404);
    const wrongMethod = await post('/api/overview', '{}');
    expect(wrongMethod.status).toBe(405);
    // A malformed %-escape in a path parameter is the caller's error, not a 500.
    const badEscape = await get('/api/jobs/%E0%A4%A');
    expect(badEscape.status).toBe(400);
    expect((badEscape.body as ErrorBody).param).toBe('path');
  });

  it('maps gRPC errors: an unknown job is 404, a pause of a one-shot job 409; a drain or move without a cluster is 409 at once, not an operation', async () => {
    expect((await get(`/api/jobs/${randomUUID()}`)).status).toBe(404);
    const client = openClient(daemon!.address);
    try {
      const { job } = await client.schedule({ queue: 'console-api', delayMs: 3_600_000 });
      const paused = await post(`/api/jobs/${job.id}/pause`, '{}');
      expect(paused.status).toBe(409);
      expect((paused.body as { grpcCode?: string }).grpcCode).toBe('FAILED_PRECONDITION');
    } finally {
      closeClient(client);
    }
    expect((await get('/api/runs/999999')).status).toBe(404);
    // An unknown run id in a search is an empty result, not an error.
    expect(await get('/api/runs?id=999999')).toEqual({ status: 200, body: { runs: [], nextPageToken: '' } });
    // A run by id with another filter: refused naming it, never silently ignored.
    const both = await get('/api/runs?id=1&queue=elsewhere');
    expect(both.status).toBe(400);
    expect((both.body as ErrorBody).param).toBe('queue');
    const drain = await post('/api/members/console-api/drain', '{}');
    expect(drain.status).toBe(409);
    expect((drain.body as ErrorBody).error).toMatch(/REDIS_URL/);
    const move = await post('/api/shards/99/move', JSON.stringify({ toMember: 'console-api' }));
    expect(move.status).toBe(409);
    expect((move.body as ErrorBody).error).toMatch(/REDIS_URL/);
    expect((await get('/api/operations')).body).toEqual([]);
  });

  it('a due-time search finds every matching run and pages on from the last one returned (before: it read 5,000 runs by id, and its token skipped runs)', async () => {
    const client = openClient(daemon!.address);
    try {
      const base = Date.now() + 7_200_000;
      const made = await client.scheduleBatch(Array.from({ length: 9 }, (_, k) => ({ queue: 'console-due', at: base + k * 1_000 })));
      const want = made.slice(2, 7).map((m) => m.run.id);
      const from = new Date(base + 2_000).toISOString();
      const to = new Date(base + 6_000).toISOString();
      const seen: string[] = [];
      let token = '';
      for (let page = 0; page < 10; page++) {
        const res = await get(`/api/runs?queue=console-due&from=${from}&to=${to}&limit=2${token ? `&pageToken=${token}` : ''}`);
        expect(res.status).toBe(200);
        const body = res.body as { runs: { id: string }[]; nextPageToken: string };
        expect(body.runs.length).toBeLessThanOrEqual(2);
        seen.push(...body.runs.map((r) => r.id));
        token = body.nextPageToken;
        if (!token) break;
      }
      expect(seen).toEqual(want);
    } finally {
      closeClient(client);
    }
  });

  it('the Queues page lists every queue holding runs or recurring jobs, not those of the first 1,000 jobs (ListQueues)', async () => {
    const client = openClient(daemon!.address);
    try {
      const far = Date.now() + 7_200_000;
      await client.scheduleBatch(Array.from({ length: 1_000 }, () => ({ queue: 'console-old', at: far })));
      await client.schedule({ queue: 'console-new', at: far });
      // A queue holding only a recurring job whose next occurrence is not a run yet (next New Year).
      const yearly = await client.scheduleRecurring({ queue: 'console-yearly', recurrence: { cron: '0 0 1 1 *' } });
      expect(yearly.firstRun).toBeNull();
      const page = await get('/api/queues');
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      const body = page.body as { queues: { queue: string; counts: { scheduled: number } }[]; queuesCapped: boolean };
      expect(body.queues.find((q) => q.queue === 'console-new')?.counts.scheduled).toBe(1);
      expect(body.queues.find((q) => q.queue === 'console-old')?.counts.scheduled).toBe(1_000);
      expect(body.queues.find((q) => q.queue === 'console-yearly')?.counts.scheduled).toBe(0);
      expect(body.queuesCapped).toBe(false);
      // The API itself, a page at a time, in name order.
      const names: string[] = [];
      let pageToken: string | undefined;
      do {
        const p = await client.listQueues({ pageSize: 1, pageToken });
        expect(p.queues.length).toBeLessThanOrEqual(1);
        names.push(...p.queues);
        pageToken = p.nextPageToken || undefined;
      } while (pageToken);
      expect(names).toEqual([...names].sort());
      expect(new Set(names).size).toBe(names.length);
      expect(names).toEqual(expect.arrayContaining(['console-due', 'console-new', 'console-old', 'console-yearly']));
    } finally {
      closeClient(client);
    }
  });

  it('serves the front end and its vendored libraries, and nothing outside dist/console/web', async () => {
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    expect(await index.text()).toContain('app.js');
    for (const file of ['/app.js', '/vendor/htm-preact.mjs', '/vendor/uPlot.esm.js', '/vendor/uPlot.min.css']) expect((await fetch(`${base}${file}`)).status, file).toBe(200);
    expect((await fetch(`${base}/%2e%2e/%2e%2e/package.json`)).status).toBe(404);
    expect((await fetch(`${base}/..%2f..%2fpackage.json`)).status).toBe(404);
  });

  it('an open console answers only requests addressed to localhost or an IP address (a DNS-rebinding guard)', async () => {
    const { port } = new URL(base);
    const statusFor = (host: string, path: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: Number(port), path, headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    // Before: 200 — a page of evil.example whose name resolved to this address read the API as same-origin.
    expect(await statusFor(`evil.example:${port}`, '/api/operations')).toBe(403);
    expect(await statusFor('evil.example', '/')).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect(await statusFor(host, '/api/operations'), host).toBe(200);
  });
});
