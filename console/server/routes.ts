/**
 * The JSON API's route table: method, path pattern, handler. One place to
 * read what the console can do. Extension point: workflows (issue on its own
 * branch) add their routes here (e.g. GET /api/workflows, /api/workflows/:id
 * for the graph with step states) and a page in web/pages.js.
 */
import { BadRequest } from './http-errors.js';
import type { ApiContext, ApiRequest } from './api-context.js';
import * as actions from './api-actions.js';
import * as read from './api-read.js';

export interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** Answered with this status on success (202 for background operations). */
  okStatus: number;
  /** Answers from the console's own state without an RPC (the server proves the caller's token first). */
  local: boolean;
  handle(ctx: ApiContext, r: ApiRequest): unknown;
}

const ID = '([^/]+)';
const route = (method: Route['method'], path: string, handle: Route['handle'], okStatus = 200, local = false): Route => ({
  method,
  pattern: new RegExp(`^${path.replace(/:id/g, ID)}$`),
  okStatus,
  local,
  handle,
});

export const ROUTES: readonly Route[] = [
  route('GET', '/api/overview', read.overview),
  route('GET', '/api/shards', read.shardMap),
  route('GET', '/api/operations', read.operations, 200, true),
  route('GET', '/api/queues', read.queues),
  route('GET', '/api/runs', read.searchRuns),
  route('GET', '/api/runs/:id', read.runHistory),
  route('GET', '/api/jobs', read.listJobs),
  route('GET', '/api/jobs/:id', read.getJob),
  route('GET', '/api/dead', read.deadLetters),
  route('POST', '/api/jobs/:id/pause', actions.pauseJob),
  route('POST', '/api/jobs/:id/resume', actions.resumeJob),
  route('POST', '/api/jobs/:id/trigger', actions.triggerJob),
  route('POST', '/api/dead/replay', actions.replayDead),
  route('POST', '/api/shards/:id/move', actions.moveShard, 202),
  route('POST', '/api/members/:id/drain', actions.drainMember, 202),
  route('POST', '/api/rebalance', actions.rebalance, 202),
];

/** A path parameter, %-decoded; a malformed escape is the caller's fault (400 naming the path), not ours. */
function decodePathParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequest('path', `"${raw.slice(0, 80)}" is not a valid %-encoded path segment`);
  }
}

/** The route for a method and path, with its path parameters; null when none matches. */
export function matchRoute(method: string, path: string): { route: Route; params: string[] } | { allowed: string[] } | null {
  const allowed: string[] = [];
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    if (r.method === method) return { route: r, params: m.slice(1).map(decodePathParam) };
    allowed.push(r.method);
  }
  return allowed.length ? { allowed } : null;
}
