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
import { closeClient, openClient, startDaemon, stopDaemon, waitUntil } from '../helpers/e2e.js';

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

  it('maps gRPC errors: an unknown job is 404, a pause of a one-shot job 409; a drain without a cluster fails as an operation', async () => {
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
    expect(await get('/api/runs?id=999999')).toEqual({ status: 200, body: { runs: [], nextPageToken: '', scanned: 0 } });
    const started = await post('/api/members/console-api/drain', '{}');
    expect(started.status).toBe(202);
    const id = (started.body as { id: number }).id;
    let summary = '';
    expect(
      await waitUntil(async () => {
        const ops = (await get('/api/operations')).body as { id: number; state: string; summary: string }[];
        const op = ops.find((o) => o.id === id);
        summary = op?.summary ?? '';
        return op?.state === 'failed';
      }, 5_000),
    ).toBe(true);
    expect(summary).toMatch(/REDIS_URL/);
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
