// The console's calls to its own JSON API (/api/…), and a polling hook.
import { useEffect, useRef, useState } from './vendor/htm-preact.mjs';

/** An API failure: the HTTP status and the server's message (which names the bad parameter on a 400). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * The caller's bearer token, for a daemon that checks them: kept in this
 * tab only (sessionStorage), sent on every API call; the daemon's gate
 * decides what it may do, exactly as for the CLI.
 */
const TOKEN_KEY = 'timelane.console.token';
export const credentials = {
  token: () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (token) => sessionStorage.setItem(TOKEN_KEY, token.trim()),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** Fired on a 401, for the shell to ask for a token. */
export const UNAUTHENTICATED_EVENT = 'timelane:unauthenticated';

function headers(extra = {}) {
  const token = credentials.token();
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

async function answer(res) {
  const body = await res.json().catch(() => ({}));
  if (res.status === 401) dispatchEvent(new CustomEvent(UNAUTHENTICATED_EVENT, { detail: body.error ?? 'a token is required' }));
  if (!res.ok) throw new ApiError(res.status, body.error ?? `HTTP ${res.status}`);
  return body;
}

/** GET /api/<path> with query parameters (empty ones left out). */
export async function getJson(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return answer(await fetch(`/api/${path}${qs ? `?${qs}` : ''}`, { headers: headers() }));
}

export async function postJson(path, body = {}) {
  return answer(await fetch(`/api/${path}`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify(body) }));
}

/**
 * Loads `load()` now, again every `everyMs` (0: once) and whenever `deps`
 * change; `reload()` loads at once. Keeps the last data while a load runs,
 * so a page never flickers back to "loading".
 */
export function usePoll(load, everyMs, deps = []) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const run = () => {
    const mine = ++seq.current;
    load().then(
      (data) => mine === seq.current && setState({ data, error: null, loading: false }),
      (error) => mine === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  };
  useEffect(() => {
    run();
    if (!everyMs) return undefined;
    const t = setInterval(run, everyMs);
    return () => clearInterval(t);
  }, deps);
  return { ...state, reload: run };
}
