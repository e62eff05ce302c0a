// Dead letters: runs that ended dead (non-retryable, or out of attempts),
// newest first, with replay of the selected ones.
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, postJson, usePoll } from '../api.js';
import { clock, shortId } from '../format.js';
import { ErrorNotice, Loading } from './common.js';

export function DeadPage({ query }) {
  const [filters, setFilters] = useState({ queue: query.get('queue') ?? '', error: '' });
  const { data, error, reload } = usePoll(() => getJson('dead', { ...filters, limit: 200 }), 5000, [filters.queue, filters.error]);
  const [selected, setSelected] = useState(new Set());
  const [outcome, setOutcome] = useState(null);
  const [replayError, setReplayError] = useState(null);
  const toggle = (id) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const replay = () => {
    setReplayError(null);
    postJson('dead/replay', { runIds: [...selected] }).then((res) => {
      setOutcome(res);
      setSelected(new Set());
      reload();
    }, setReplayError);
  };
  return html`
    <h1>Dead letters</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>queue<input value=${filters.queue} onChange=${(e) => setFilters({ ...filters, queue: e.target.value })} /></label>
      <label>error contains<input value=${filters.error} onChange=${(e) => setFilters({ ...filters, error: e.target.value })} /></label>
      <button class="primary" type="button" disabled=${selected.size === 0} onClick=${replay} data-testid="replay">Replay ${selected.size || ''} selected</button>
    </form>
    <${ErrorNotice} error=${error ?? replayError} />
    ${outcome
      ? html`<div class="notice" data-testid="replay-outcome">Replayed ${outcome.replayed.length}: ${outcome.replayed.map((r) => html`<a href=${`#/runs/${r.newRunId}`}>run ${r.newRunId}</a> `)}${outcome.skippedRunIds.length ? ` (skipped ${outcome.skippedRunIds.length}: not dead, or replayed before)` : ''}</div>`
      : null}
    ${data
      ? html`<div class="panel"><table data-testid="dead">
          <thead><tr><th></th><th>run</th><th>job</th><th>queue</th><th class="num">attempt</th><th>died</th><th>error</th></tr></thead>
          <tbody>${data.runs.map((r) => html`<tr data-run=${r.id}>
            <td><input type="checkbox" aria-label=${`select run ${r.id}`} checked=${selected.has(r.id)} onChange=${() => toggle(r.id)} /></td>
            <td><a href=${`#/runs/${r.id}`}>${r.id}</a></td><td class="mono"><a href=${`#/jobs/${r.jobId}`} title=${r.jobId}>${shortId(r.jobId)}</a></td>
            <td>${r.queue}</td><td class="num">${r.attempt}</td><td>${clock(r.finishedAtMs)}</td><td class="err">${r.error}</td>
          </tr>`)}</tbody>
        </table>${data.runs.length === 0 ? html`<p class="muted">No dead letters.</p>` : null}</div>`
      : error ? null : html`<${Loading} what="dead letters" />`}
  `;
}
