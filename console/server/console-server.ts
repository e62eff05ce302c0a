/**
 * The web console's HTTP server: the front end (static files) and a JSON API
 * under /api that calls the daemon's own gRPC API through the TypeScript
 * client, exactly as the CLI does. It lives outside daemon/ because it is a
 * client of the API, not a part of the engine: it imports clients/ and
 * nothing from daemon/; the daemon only starts it with its gRPC address,
 * its metrics registry and a read-only local view.
 *
 * States: listening (start resolved) → closed (stop).
 * Invariants: every /api answer is JSON; a failure is answered through the
 *   one mapper (http-errors.ts), never left hanging; bodies over
 *   MAX_BODY_BYTES are refused; actions (POST) need a JSON content type.
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import { TimelaneClient, type TimelaneClientOptions } from '../../clients/client.js';
import { toJson } from '../../clients/format.js';
import type { ApiContext, ClientFor, LocalMemberView } from './api-context.js';
import { BadRequest, errorAnswer } from './http-errors.js';
import { MetricsHistory } from './metrics-history.js';
import { OperationLog } from './operations.js';
import { QueueStatsReader } from './queue-stats.js';
import { matchRoute } from './routes.js';
import { StaticFiles } from './static-files.js';

const MAX_BODY_BYTES = 256 * 1024;

export interface ConsoleOptions {
  /** host:port to listen on (port 0: any free port). */
  address: string;
  /** The daemon's own gRPC address (host:port) the API calls go to. */
  grpcAddress: string;
  /** The daemon's metrics registry, sampled for the overview's charts. */
  registry: Registry;
  local: LocalMemberView;
  /** Options of the API client (credentials when TLS/auth land). */
  clientOptions?: TimelaneClientOptions;
  /** Where the front end is; default: web/ beside this module's folder (dist/console/web once built). */
  webRoot?: string;
  /** Reports a request that failed inside the console (500s), for the daemon's log. */
  onError?: (err: unknown, url: string) => void;
}

export interface ConsoleServer {
  /** http://host:port/ as bound. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleServer> {
  const client = new TimelaneClient(opts.grpcAddress, { timeoutMs: 10_000, ...opts.clientOptions });
  const clientFor: ClientFor = () => client;
  const history = new MetricsHistory({ registry: opts.registry });
  const ctx: ApiContext = {
    clientFor,
    local: opts.local,
    history,
    queues: new QueueStatsReader({ client, streamsPerQueue: () => opts.local.streamsPerQueue(), now: Date.now }),
    operations: new OperationLog(),
    now: Date.now,
  };
  const files = new StaticFiles(opts.webRoot ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web'));
  const server = http.createServer((req, res) => {
    handle(ctx, files, req, res).catch((err: unknown) => {
      opts.onError?.(err, req.url ?? '');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error (see the daemon log)' });
      else res.end();
    });
  });
  const idx = opts.address.lastIndexOf(':');
  const host = opts.address.slice(0, idx);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(opts.address.slice(idx + 1)), host, () => resolve());
    });
  } catch (err) {
    client.close();
    const why = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use by another process' : (err as Error).message;
    throw new Error(`--console-address ${opts.address}: cannot listen (${why}); pick another with --console-address host:port (port 0: any free port), or "" to turn the console off`);
  }
  history.start();
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    async stop() {
      history.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      client.close();
    },
  };
}

async function handle(ctx: ApiContext, files: StaticFiles, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://console');
  const method = req.method ?? 'GET';
  if (url.pathname.startsWith('/api/')) return handleApi(ctx, req, res, url, method);
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const file = await files.get(url.pathname);
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.body.length, 'cache-control': 'no-cache' });
  res.end(method === 'HEAD' ? undefined : file.body);
}

async function handleApi(ctx: ApiContext, req: http.IncomingMessage, res: http.ServerResponse, url: URL, method: string): Promise<void> {
  const match = matchRoute(method, url.pathname);
  if (!match) return sendJson(res, 404, { error: `no such endpoint: ${method} ${url.pathname}` });
  if ('allowed' in match) {
    res.setHeader('allow', match.allowed.join(', '));
    return sendJson(res, 405, { error: `${method} not allowed on ${url.pathname} (allowed: ${match.allowed.join(', ')})` });
  }
  // Actions need a JSON content type: a cross-site HTML form cannot send one
  // without a CORS preflight, which this server never grants.
  if (method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    return sendJson(res, 415, { error: 'POST bodies must be application/json' });
  }
  try {
    const body = method === 'POST' ? await readJsonBody(req) : {};
    const value = await match.route.handle(ctx, { req, client: ctx.clientFor(req), query: url.searchParams, params: match.params, body });
    sendJson(res, match.route.okStatus, value);
  } catch (err) {
    const answer = errorAnswer(err);
    if (answer.status === 500) throw err; // ours, not the API's: logged by the caller
    sendJson(res, answer.status, answer.body);
  }
}

async function readJsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequest('body', `must be at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequest('body', 'must be JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BadRequest('body', 'must be a JSON object');
  return parsed as Record<string, unknown>;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  // toJson: payloads (Buffers) as text, as the CLI's --json prints them.
  const body = toJson(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}
