/**
 * The web console's HTTP server: the front end (static files) and a JSON API
 * under /api that calls the daemon's own gRPC API through the TypeScript
 * client, exactly as the CLI does — with the caller's own bearer token, so
 * the daemon's gate decides what each person may see and do. It lives
 * outside daemon/ because it is a client of the API, not a part of the
 * engine: it imports the client library (@timelane/client) and nothing from
 * daemon/; the daemon only
 * starts it with its gRPC address, its metrics registry, its TLS files and
 * a read-only local view.
 *
 * States: listening (start resolved) → closed (stop).
 * Invariants: every /api answer is JSON; a failure is answered through the
 *   one mapper (http-errors.ts), never left hanging; bodies over
 *   MAX_BODY_BYTES are refused; actions (POST) need a JSON content type;
 *   with authRequired, no /api answer goes to a caller whose token the
 *   daemon has not accepted.
 */
import http from 'node:http';
import { isIP } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import https from 'node:https';
import path from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import { fileURLToPath } from 'node:url';
import type { Registry } from 'prom-client';
import { TimelaneClient, type TimelaneClientOptions } from '@timelane/client';
import { toJson } from '../../clients/cli/format.js';
import type { ApiContext, LocalMemberView } from './api-context.js';
import { BadRequest, errorAnswer, Unauthenticated } from './http-errors.js';
import { MetricsHistory } from './metrics-history.js';
import { OperationLog } from './operations.js';
import { matchRoute } from './routes.js';
import { ApiSessions } from './sessions.js';
import { StaticFiles } from './static-files.js';

const MAX_BODY_BYTES = 256 * 1024;

export interface ConsoleHttps {
  /** Certificate and key of the console's HTTPS listener. */
  options: SecureContextOptions;
  /** Keeps the listener's certificate current (re-read on change); returns a stop function. */
  watch?: (server: https.Server) => () => void;
}

export interface ConsoleOptions {
  /** host:port to listen on (port 0: any free port). */
  address: string;
  /** The daemon's own gRPC address (host:port) the API calls go to. */
  grpcAddress: string;
  /** The daemon's metrics registry, sampled for the overview's charts. */
  registry: Registry;
  local: LocalMemberView;
  /** How the console's clients reach the gRPC port (TLS credentials; never a token: each caller brings theirs). */
  clientOptions?: Omit<TimelaneClientOptions, 'token'>;
  /** The daemon checks bearer tokens: a request without one is answered 401 (the page then asks for a token). */
  authRequired?: boolean;
  /** Serve HTTPS (the daemon's TLS certificate) instead of HTTP. */
  https?: ConsoleHttps;
  /** Where the front end is; default: web/ beside this module's folder (dist/console/web once built). */
  webRoot?: string;
  /** Reports a request that failed inside the console (500s), for the daemon's log. */
  onError?: (err: unknown, url: string) => void;
}

export interface ConsoleServer {
  /** http(s)://host:port/ as bound. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

interface Runtime {
  ctx: ApiContext;
  sessions: ApiSessions;
  files: StaticFiles;
  authRequired: boolean;
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleServer> {
  const sessions = new ApiSessions({
    makeClient: (token) => new TimelaneClient(opts.grpcAddress, { timeoutMs: 10_000, ...opts.clientOptions, token }),
    streamsPerQueue: () => opts.local.streamsPerQueue(),
  });
  const history = new MetricsHistory({ registry: opts.registry });
  const rt: Runtime = {
    ctx: { local: opts.local, history, operations: new OperationLog(), now: Date.now },
    sessions,
    files: new StaticFiles(opts.webRoot ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web')),
    authRequired: opts.authRequired ?? false,
  };
  const listener: http.RequestListener = (req, res) => {
    handle(rt, req, res).catch((err: unknown) => {
      opts.onError?.(err, req.url ?? '');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error (see the daemon log)' });
      else res.end();
    });
  };
  const server: http.Server = opts.https ? https.createServer(opts.https.options, listener) : http.createServer(listener);
  const idx = opts.address.lastIndexOf(':');
  const host = opts.address.slice(0, idx);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(opts.address.slice(idx + 1)), host, () => resolve());
    });
  } catch (err) {
    sessions.stop();
    const why = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use by another process' : (err as Error).message;
    throw new Error(`--console-address ${opts.address}: cannot listen (${why}); pick another with --console-address host:port (port 0: any free port), or "" to turn the console off`);
  }
  const stopWatching = opts.https?.watch?.(server as https.Server) ?? (() => undefined);
  history.start();
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `${opts.https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    async stop() {
      history.stop();
      stopWatching();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      sessions.stop();
    },
  };
}

async function handle(rt: Runtime, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://console');
  const method = req.method ?? 'GET';
  // A console that asks for no token: a page of another site whose name was made to resolve to this address
  // (DNS rebinding) would be same-origin with it, and could read and act. Such a page names its own host.
  if (!rt.authRequired && !isAddressHost(req.headers.host)) {
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('this console answers only requests addressed to localhost or an IP address (Host header)\n');
    return;
  }
  if (url.pathname.startsWith('/api/')) return handleApi(rt, req, res, url, method);
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const file = await rt.files.get(url.pathname);
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.body.length, 'cache-control': 'no-cache' });
  res.end(method === 'HEAD' ? undefined : file.body);
}

/** Whether a Host header names localhost or an IP address (with or without a port), not a DNS name. */
export function isAddressHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || isIP(name) !== 0;
}

/** The caller's bearer token from `Authorization: Bearer …`; undefined when none. */
function bearerToken(req: http.IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header === '') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw new Unauthenticated('authorization: expected "Bearer <token>"');
  return m[1];
}

async function handleApi(rt: Runtime, req: http.IncomingMessage, res: http.ServerResponse, url: URL, method: string): Promise<void> {
  let match: ReturnType<typeof matchRoute>;
  try {
    match = matchRoute(method, url.pathname);
  } catch (err) {
    if (err instanceof BadRequest) return sendJson(res, 400, { error: err.message, param: err.param });
    throw err;
  }
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
    const token = bearerToken(req);
    if (rt.authRequired && token === undefined) throw new Unauthenticated('this daemon requires a bearer token (Authorization: Bearer <token>)');
    // Read before a session is taken: a slow upload must not hold a client (nor one per made-up token).
    const body = method === 'POST' ? await readJsonBody(req) : {};
    const value = await rt.sessions.with(token, isRefusedToken, async (session) => {
      // A route that makes no RPC, or answers before its RPC does (202), proves the token with one small read first.
      if (rt.authRequired && (match.route.local || match.route.okStatus === 202)) await session.client.listQueueLimits();
      return match.route.handle(rt.ctx, { req, client: session.client, queues: session.queues, query: url.searchParams, params: match.params, body, hold: session.hold });
    });
    sendJson(res, match.route.okStatus, value);
  } catch (err) {
    const answer = errorAnswer(err);
    if (answer.status === 500) throw err; // ours, not the API's: logged by the caller
    sendJson(res, answer.status, answer.body);
  }
}

/** The daemon refused the token itself (not a role or a request): its session is not kept. */
function isRefusedToken(err: unknown): boolean {
  return err instanceof Unauthenticated || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === GrpcStatus.UNAUTHENTICATED);
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
