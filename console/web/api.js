// The console's calls to its own JSON API (/api/…), and a polling hook.
import { useEffect, useRef, useState } from './vendor/htm-preact.mjs';

/** An API failure: the HTTP status and the server's message (which names the bad parameter on a 400). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function answer(res) {
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body.error ?? `HTTP ${res.status}`);
  return body;
}

/** GET /api/<path> with query parameters (empty ones left out). */
export async function getJson(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return answer(await fetch(`/api/${path}${qs ? `?${qs}` : ''}`));
}

export async function postJson(path, body = {}) {
  return answer(await fetch(`/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
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
