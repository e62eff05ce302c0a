// Runs: search by id, job, queue, status and due time; one run's full
// history (every attempt: claim, delivery, lag, worker, error).
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, usePoll } from '../api.js';
import { badge, clock, duration, isoTime, shortId, utcInputToIso } from '../format.js';
import { ErrorNotice, Loading } from './common.js';

const STATUSES = ['', 'scheduled', 'fired', 'completed', 'failed', 'dead', 'cancelled', 'skipped', 'buffered', 'missed'];
const FIELDS = ['id', 'job', 'queue', 'status', 'from', 'to'];

export function RunsTable({ runs, id = 'runs' }) {
  if (runs.length === 0) return html`<p class="muted" data-testid=${id}>No runs.</p>`;
  return html`<table data-testid=${id}>
    <thead><tr><th>run</th><th>job</th><th>queue</th><th>status</th><th class="num">attempt</th><th>due (UTC)</th><th>lag</th><th class="num">deliveries</th><th>error</th></tr></thead>
    <tbody>${runs.map((r) => html`<tr data-run=${r.id}>
      <td><a href=${`#/runs/${r.id}`}>${r.id}</a></td>
      <td class="mono"><a href=${`#/jobs/${r.jobId}`} title=${r.jobId}>${shortId(r.jobId)}</a></td>
      <td>${r.queue}</td><td>${badge(r.status)}</td><td class="num">${r.attempt}</td>
      <td>${clock(r.dueAtMs)}</td><td>${r.firedAtMs ? duration(r.lagMs) : '–'}</td><td class="num">${r.deliveries}</td>
      <td class="err">${r.error}</td>
    </tr>`)}</tbody>
  </table>`;
}

export function RunsPage({ query }) {
  const initial = Object.fromEntries(FIELDS.map((f) => [f, query.get(f) ?? '']));
  const [form, setForm] = useState(initial);
  const [search, setSearch] = useState(initial);
  // A run by id is that one run: the other fields are not sent with it (the API refuses the mix rather than ignore them).
  const params = () => (search.id ? { id: search.id } : { ...search, from: utcInputToIso(search.from), to: utcInputToIso(search.to), limit: 200 });
  const { data, error } = usePoll(() => getJson('runs', params()), 0, [search]);
  const field = (name, label, props = {}) =>
    html`<label>${label}<input name=${name} value=${form[name]} onInput=${(e) => setForm({ ...form, [name]: e.target.value })} ...${props} /></label>`;
  const submit = (e) => {
    e.preventDefault();
    setSearch({ ...form });
    const q = new URLSearchParams(Object.entries(form).filter(([, v]) => v));
    history.replaceState(null, '', `#/runs${q.toString() ? `?${q}` : ''}`);
  };
  return html`
    <h1>Runs</h1>
    <form class="filters" onSubmit=${submit} data-testid="run-search">
      ${field('id', 'run id', { size: 10 })} ${field('job', 'job id', { size: 36 })} ${field('queue', 'queue')}
      <label>status<select name="status" value=${form.status} onChange=${(e) => setForm({ ...form, status: e.target.value })}>${STATUSES.map((s) => html`<option value=${s}>${s || 'any'}</option>`)}</select></label>
      ${field('from', 'due from (UTC)', { type: 'datetime-local', step: 1 })} ${field('to', 'due to (UTC)', { type: 'datetime-local', step: 1 })}
      <button class="primary" type="submit">Search</button>
    </form>
    <${ErrorNotice} error=${error} />
    ${data
      ? html`<div class="panel">
          <p class="muted" data-testid="run-count">${data.runs.length} run${data.runs.length === 1 ? '' : 's'}${data.nextPageToken ? ' (more: narrow the search)' : ''}</p>
          <${RunsTable} runs=${data.runs} />
        </div>`
      : error ? null : html`<${Loading} what="runs" />`}
  `;
}

export function RunPage({ arg }) {
  const { data, error } = usePoll(() => getJson(`runs/${encodeURIComponent(arg)}`), 3000, [arg]);
  if (!data) return html`<h1>Run ${arg}</h1><${ErrorNotice} error=${error} />${error ? null : html`<${Loading} what="the run" />`}`;
  const r = data.run;
  return html`
    <h1>Run ${r.id} ${badge(r.status)}</h1>
    <${ErrorNotice} error=${error} />
    <div class="panel">
      <dl class="spec" data-testid="run-summary">
        <dt>job</dt><dd class="mono"><a href=${`#/jobs/${r.jobId}`}>${r.jobId}</a>${data.job ? ` (${data.job.kind}, ${data.job.status})` : ''}</dd>
        <dt>queue</dt><dd>${r.queue}</dd>
        <dt>shard</dt><dd>${r.shard}</dd>
        <dt>due</dt><dd>${isoTime(r.dueAtMs)}${r.nominalAtMs ? ` (occurrence ${isoTime(r.nominalAtMs)})` : ''}</dd>
        <dt>origin</dt><dd>${r.origin || 'schedule'}${r.replayOf ? html` — replays <a href=${`#/runs/${r.replayOf}`}>${r.replayOf}</a>` : null}</dd>
        <dt>idempotency key</dt><dd class="mono">${r.idempotencyKey}</dd>
      </dl>
    </div>
    <div class="panel">
      <h2>History: ${data.attempts.length} attempt${data.attempts.length === 1 ? '' : 's'}</h2>
      <table data-testid="attempts">
        <thead><tr><th>run</th><th class="num">attempt</th><th>status</th><th>due (UTC)</th><th>claimed (UTC)</th><th>fired (UTC)</th><th>lag</th><th class="num">deliveries</th><th class="num">fence</th><th>worker</th><th>finished (UTC)</th><th>error</th></tr></thead>
        <tbody>${data.attempts.map((a) => html`<tr data-run=${a.id} class=${a.id === r.id ? 'current' : ''}>
          <td><a href=${`#/runs/${a.id}`}>${a.id}</a></td><td class="num">${a.attempt}</td><td>${badge(a.status)}</td>
          <td>${clock(a.dueAtMs)}</td><td>${clock(a.claimedAtMs)}</td><td>${clock(a.firedAtMs)}</td>
          <td>${a.firedAtMs ? duration(a.lagMs) : '–'}</td><td class="num">${a.deliveries}</td><td class="num">${a.fence || '–'}</td>
          <td>${a.workerId || '–'}</td><td>${clock(a.finishedAtMs)}</td><td class="err">${a.error}</td>
        </tr>`)}</tbody>
      </table>
    </div>
  `;
}
