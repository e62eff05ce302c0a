// The console's shell: navigation and hash routing (#/page/arg?query).
// Pages register in PAGES — the extension point for workflows (a graph of
// step states) when that API lands: add { path: 'workflows', … } there and
// its routes in console/server/routes.ts.
import { html, render, useEffect, useState } from './vendor/htm-preact.mjs';
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

/** "#/runs/42?queue=a" → { path: 'runs', arg: '42', query: URLSearchParams }. */
function parseHash(hash) {
  const [pathPart, queryPart = ''] = hash.replace(/^#\/?/, '').split('?');
  const [path = 'overview', arg = ''] = pathPart.split('/');
  return { path: path || 'overview', arg: decodeURIComponent(arg), query: new URLSearchParams(queryPart) };
}

function App() {
  const [route, setRoute] = useState(parseHash(location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const page = PAGES.find((p) => p.path === route.path) ?? PAGES[0];
  const Body = route.arg && page.item ? page.item : page.list;
  useEffect(() => {
    document.title = `${page.title} · timelane`;
  }, [page]);
  return html`
    <header class="top">
      <span class="brand">timelane</span>
      <nav>${PAGES.map((p) => html`<a href="#/${p.path}" class=${p === page ? 'active' : ''}>${p.title}</a>`)}</nav>
    </header>
    <main>
      <${Body} key=${`${route.path}/${route.arg}`} arg=${route.arg} query=${route.query} />
    </main>
  `;
}

const root = document.getElementById('app');
root.textContent = ''; // the static "Loading…" placeholder: Preact renders beside existing children otherwise
render(html`<${App} />`, root);
