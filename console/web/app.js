// The console's shell: navigation and hash routing (#/page/arg?query).
// Pages register in PAGES — the extension point for workflows (a graph of
// step states) when that API lands: add { path: 'workflows', … } there and
// its routes in console/server/routes.ts.
import { html, render, useEffect, useState } from './vendor/htm-preact.mjs';
import { credentials, UNAUTHENTICATED_EVENT } from './api.js';
import { OverviewPage } from './pages/overview.js';
import { ShardsPage } from './pages/shards.js';
import { QueuesPage } from './pages/queues.js';
import { RunsPage, RunPage } from './pages/runs.js';
import { JobsPage, JobPage } from './pages/jobs.js';
import { DeadPage } from './pages/dead.js';

const PAGES = [
  { path: 'overview', title: 'Overview', list: OverviewPage },
  { path: 'shards', title: 'Shards & members', list: ShardsPage },
  { path: 'queues', title: 'Queues', list: QueuesPage },
  { path: 'runs', title: 'Runs', list: RunsPage, item: RunPage },
  { path: 'jobs', title: 'Jobs & schedules', list: JobsPage, item: JobPage },
  { path: 'dead', title: 'Dead letters', list: DeadPage },
];

/**
 * "#/runs/42?queue=a" → { path: 'runs', arg: '42', query: URLSearchParams, problem: null }.
 * An address that names no page, or whose argument is not valid %-encoding
 * ("#/jobs/%"), has a `problem` to show instead of a page: a hand-edited or
 * cut-off link is a notice, never a blank console.
 */
function parseHash(hash) {
  const [pathPart, queryPart = ''] = hash.replace(/^#\/?/, '').split('?');
  const [path = '', rawArg = ''] = pathPart.split('/');
  const route = { path: path || 'overview', arg: '', query: new URLSearchParams(queryPart), problem: null };
  if (!PAGES.some((p) => p.path === route.path)) {
    route.problem = `There is no page "${path}".`;
    return route;
  }
  try {
    route.arg = decodeURIComponent(rawArg);
  } catch {
    route.problem = `The address is malformed: "${rawArg}" is not valid %-encoding.`;
  }
  return route;
}

/** What an address that names nothing shows, with the way back. */
function NotFound({ problem }) {
  return html`
    <h1>Not found</h1>
    <div class="notice error" role="alert" data-testid="not-found">${problem} Pick a page above, or go to the <a href="#/overview">overview</a>.</div>
  `;
}

/** Asks for a bearer token when the daemon refused a call for want of one (401). */
function TokenForm({ reason }) {
  const [token, setToken] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (!token.trim()) return;
    credentials.set(token);
    location.reload();
  };
  return html`
    <form class="notice" data-testid="token-form" onSubmit=${submit}>
      <p><strong>This daemon checks bearer tokens.</strong> ${reason}</p>
      <p class="muted">Paste yours: a <em>reader</em> token shows every page, <em>scheduler</em> also pauses, resumes, triggers and replays, <em>admin</em> also moves shards. It is kept in this browser tab only.</p>
      <input type="password" name="token" size="48" placeholder="token" value=${token} onInput=${(e) => setToken(e.target.value)} autocomplete="off" />
      <button class="primary" type="submit">Use this token</button>
    </form>
  `;
}

function App() {
  const [route, setRoute] = useState(parseHash(location.hash));
  const [unauthenticated, setUnauthenticated] = useState(null);
  useEffect(() => {
    const onHash = () => setRoute(parseHash(location.hash));
    const on401 = (e) => setUnauthenticated(e.detail);
    addEventListener('hashchange', onHash);
    addEventListener(UNAUTHENTICATED_EVENT, on401);
    return () => {
      removeEventListener('hashchange', onHash);
      removeEventListener(UNAUTHENTICATED_EVENT, on401);
    };
  }, []);
  const signOut = () => {
    credentials.clear();
    location.reload();
  };
  const page = PAGES.find((p) => p.path === route.path) ?? null;
  const Body = route.problem ? NotFound : route.arg && page.item ? page.item : page.list;
  useEffect(() => {
    document.title = `${route.problem ? 'Not found' : page.title} · timelane`;
  }, [page, route.problem]);
  return html`
    <header class="top">
      <span class="brand">timelane</span>
      <nav>${PAGES.map((p) => html`<a href="#/${p.path}" class=${p === page ? 'active' : ''}>${p.title}</a>`)}</nav>
      ${credentials.token() ? html`<span class="member">signed in with a token · <a href="#" data-testid="sign-out" onClick=${signOut}>sign out</a></span>` : null}
    </header>
    <main>
      ${unauthenticated ? html`<${TokenForm} reason=${unauthenticated} />` : null}
      <${Body} key=${`${route.path}/${route.arg}`} arg=${route.arg} query=${route.query} problem=${route.problem} />
    </main>
  `;
}

const root = document.getElementById('app');
root.textContent = ''; // the static "Loading…" placeholder: Preact renders beside existing children otherwise
render(html`<${App} />`, root);
