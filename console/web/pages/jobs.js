// Jobs & schedules: the jobs, one job's spec, next fire times, counts and
// latest runs, and pause / resume / trigger.
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, postJson, usePoll } from '../api.js';
import { badge, duration, isoTime, relative, ruleText, shortId } from '../format.js';
import { ErrorNotice, Loading } from './common.js';
import { RunsTable } from './runs.js';

/** Payloads shown at most this long: the rest is cut, and marked so. */
const PAYLOAD_SHOWN = 500;

function payloadText(payload) {
  if (typeof payload !== 'string') return '';
  return payload.length > PAYLOAD_SHOWN ? `${payload.slice(0, PAYLOAD_SHOWN)}… (${payload.length} characters)` : payload;
}

function JobActions({ job, onDone }) {
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  if (!job.recurrence) return null;
  const act = (verb) => {
    setError(null);
    postJson(`jobs/${job.id}/${verb}`, {}).then((res) => {
      setNote(verb === 'trigger' ? `triggered run ${res.run.id}` : verb === 'pause' ? `paused (${res.runsWithdrawn} waiting run(s) withdrawn)` : 'resumed');
      onDone();
    }, setError);
  };
  return html`<span class="actions">
    ${job.status === 'active' ? html`<button onClick=${() => act('pause')}>Pause</button>` : null}
    ${job.status === 'paused' ? html`<button onClick=${() => act('resume')}>Resume</button>` : null}
    ${job.status === 'active' ? html`<button onClick=${() => act('trigger')}>Trigger now</button>` : null}
    ${note ? html`<span class="muted" data-testid="action-note">${note}</span>` : null}
    <${ErrorNotice} error=${error} />
  </span>`;
}

export function JobsPage({ query }) {
  const [filters, setFilters] = useState({ queue: query.get('queue') ?? '', kind: query.get('kind') ?? '', status: query.get('status') ?? '' });
  const { data, error, reload } = usePoll(() => getJson('jobs', { ...filters, limit: 200 }), 5000, [filters.queue, filters.kind, filters.status]);
  const select = (name, values) =>
    html`<label>${name}<select value=${filters[name]} onChange=${(e) => setFilters({ ...filters, [name]: e.target.value })}>${values.map((v) => html`<option value=${v}>${v || 'any'}</option>`)}</select></label>`;
  return html`
    <h1>Jobs & schedules</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>queue<input value=${filters.queue} onChange=${(e) => setFilters({ ...filters, queue: e.target.value })} /></label>
      ${select('kind', ['', 'once', 'cron', 'interval'])} ${select('status', ['', 'active', 'paused', 'completed', 'dead', 'cancelled'])}
    </form>
    <${ErrorNotice} error=${error} />
    ${data
      ? html`<div class="panel"><table data-testid="jobs">
          <thead><tr><th>job</th><th>queue</th><th>kind</th><th>status</th><th>rule</th><th>next fire</th><th class="num">occurrences</th><th></th></tr></thead>
          <tbody>${data.jobs.map((j) => html`<tr data-job=${j.id}>
            <td class="mono"><a href=${`#/jobs/${j.id}`} title=${j.id}>${shortId(j.id)}</a></td><td>${j.queue}</td><td>${j.kind}</td><td>${badge(j.status)}</td>
            <td class="mono">${ruleText(j) || '–'}</td><td title=${isoTime(j.nextFireAtMs)}>${relative(j.nextFireAtMs)}</td><td class="num">${j.recurrence ? j.occurrences : '–'}</td>
            <td><${JobActions} job=${j} onDone=${reload} /></td>
          </tr>`)}</tbody>
        </table>${data.nextPageToken ? html`<p class="muted">More jobs: filter by queue, kind or status.</p>` : null}</div>`
      : error ? null : html`<${Loading} what="jobs" />`}
  `;
}

export function JobPage({ arg }) {
  const { data, error, reload } = usePoll(() => getJson(`jobs/${encodeURIComponent(arg)}`), 3000, [arg]);
  if (!data) return html`<h1>Job</h1><${ErrorNotice} error=${error} />${error ? null : html`<${Loading} what="the job" />`}`;
  const j = data.job;
  const r = j.recurrence;
  const c = data.counts;
  return html`
    <h1>Job <span class="mono">${j.id}</span> <span data-testid="job-status">${badge(j.status)}</span></h1>
    <${ErrorNotice} error=${error} />
    <div class="panel">
      <${JobActions} job=${j} onDone=${reload} />
      <dl class="spec" data-testid="job-spec" style="margin-top:8px">
        <dt>queue</dt><dd>${j.queue}</dd>
        <dt>kind</dt><dd>${j.kind}</dd>
        ${r ? html`<dt>rule</dt><dd class="mono">${ruleText(j)}</dd>
          <dt>overlap</dt><dd>${r.overlap}</dd>
          <dt>catch-up</dt><dd>${r.catchUp.mode}, window ${duration(r.catchUp.windowMs)}, at most ${r.catchUp.maxRuns}</dd>
          ${r.jitterMs ? html`<dt>jitter</dt><dd>${duration(r.jitterMs)}</dd>` : null}
          ${r.limit ? html`<dt>limit</dt><dd>${r.limit} occurrences</dd>` : null}` : null}
        <dt>delivery</dt><dd>${j.delivery}</dd>
        <dt>retry</dt><dd>${j.retry.maxAttempts} attempts, backoff ${duration(j.retry.initialBackoffMs)} … ${duration(j.retry.maxBackoffMs)}</dd>
        <dt>lease</dt><dd>${duration(j.leaseMs)}</dd>
        <dt>priority</dt><dd>${j.priority}</dd>
        <dt>namespace</dt><dd>${j.namespace}</dd>
        <dt>created</dt><dd>${isoTime(j.createdAtMs)}</dd>
        ${j.pauseNote ? html`<dt>pause note</dt><dd>${j.pauseNote}</dd>` : null}
        <dt>payload</dt><dd class="mono" data-testid="job-payload">${payloadText(j.payload)}</dd>
      </dl>
    </div>
    ${r ? html`<div class="grid2">
      <div class="panel"><h2>Next fire times</h2>
        ${data.nextFireTimesMs.length ? html`<ol data-testid="next-fires">${data.nextFireTimesMs.map((t) => html`<li>${isoTime(t)} <span class="muted">(${relative(t)})</span></li>`)}</ol>` : html`<p class="muted">None (paused or ended).</p>`}
      </div>
      <div class="panel"><h2>Counts</h2>
        ${c ? html`<dl class="spec" data-testid="job-counts"><dt>fired</dt><dd>${c.fired}</dd><dt>completed</dt><dd>${c.completed}</dd><dt>dead</dt><dd>${c.dead}</dd><dt>skipped</dt><dd>${c.skipped}</dd><dt>missed</dt><dd>${c.missed}</dd><dt>scheduled</dt><dd>${c.scheduled}</dd></dl>` : null}
      </div>
    </div>` : null}
    <div class="panel"><h2>${r ? 'Latest runs' : 'Runs'}</h2><${RunsTable} runs=${data.runs} id="job-runs" /></div>
  `;
}
