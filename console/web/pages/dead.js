// Dead letters: runs that ended dead (non-retryable, or out of attempts),
// newest first, a page at a time, with replay of the selected ones.
//
// State: the filters, how many pages are shown (1 until "more" is pressed;
// back to 1 when the filters change) and the selected run ids (emptied when
// the filters change). Every poll reloads the pages shown, following the
// API's page tokens, so the rows stay one consistent, current list. Replay
// acts only on selected runs that are shown: a run the list no longer holds
// (filtered out, replayed elsewhere) is never replayed unseen.
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, postJson, usePoll } from '../api.js';
import { clock, shortId } from '../format.js';
import { ErrorNotice, Loading } from './common.js';

/** Dead runs per page (GET /api/dead's `limit`). */
const PAGE_SIZE = 200;

/** The first `pages` pages of dead runs matching `filters`: { runs, nextPageToken } ('' when none is left). */
async function loadPages(filters, pages) {
  const runs = [];
  let pageToken = '';
  for (let i = 0; i < pages; i++) {
    const res = await getJson('dead', { ...filters, limit: PAGE_SIZE, pageToken });
    runs.push(...res.runs);
    pageToken = res.nextPageToken;
    if (!pageToken) break;
  }
  return { runs, nextPageToken: pageToken };
}

export function DeadPage({ query }) {
  const [filters, setFilters] = useState({ queue: query.get('queue') ?? '', error: '' });
  const [pages, setPages] = useState(1);
  const [selected, setSelected] = useState(new Set());
  const { data, error, reload } = usePoll(() => loadPages(filters, pages), 5000, [filters.queue, filters.error, pages]);
  const [outcome, setOutcome] = useState(null);
  const [replayError, setReplayError] = useState(null);
  const filter = (name, value) => {
    if (value === filters[name]) return;
    setFilters({ ...filters, [name]: value });
    setPages(1);
    setSelected(new Set());
  };
  const shown = new Set((data?.runs ?? []).map((r) => r.id));
  const chosen = [...selected].filter((id) => shown.has(id));
  const toggle = (id) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const replay = () => {
    setReplayError(null);
    postJson('dead/replay', { runIds: chosen }).then((res) => {
      setOutcome(res);
      setSelected(new Set());
      reload();
    }, setReplayError);
  };
  return html`
    <h1>Dead letters</h1>
    <form class="filters" onSubmit=${(e) => e.preventDefault()}>
      <label>queue<input name="queue" value=${filters.queue} onChange=${(e) => filter('queue', e.target.value)} /></label>
      <label>error contains<input name="error" value=${filters.error} onChange=${(e) => filter('error', e.target.value)} /></label>
      <button class="primary" type="button" disabled=${chosen.length === 0} onClick=${replay} data-testid="replay">Replay ${chosen.length || ''} selected</button>
    </form>
    <${ErrorNotice} error=${error ?? replayError} />
    ${outcome
      ? html`<div class="notice" data-testid="replay-outcome">Replayed ${outcome.replayed.length}: ${outcome.replayed.map((r) => html`<a href=${`#/runs/${r.newRunId}`}>run ${r.newRunId}</a> `)}${outcome.skippedRunIds.length ? ` (skipped ${outcome.skippedRunIds.length}: not dead, or replayed before)` : ''}</div>`
      : null}
    ${data
      ? html`<div class="panel"><table data-testid="dead">
          <thead><tr><th></th><th>run</th><th>job</th><th>queue</th><th class="num">attempt</th><th>died (UTC)</th><th>error</th></tr></thead>
          <tbody>${data.runs.map((r) => html`<tr data-run=${r.id}>
            <td><input type="checkbox" aria-label=${`select run ${r.id}`} checked=${selected.has(r.id)} onChange=${() => toggle(r.id)} /></td>
            <td><a href=${`#/runs/${r.id}`}>${r.id}</a></td><td class="mono"><a href=${`#/jobs/${r.jobId}`} title=${r.jobId}>${shortId(r.jobId)}</a></td>
            <td>${r.queue}</td><td class="num">${r.attempt}</td><td>${clock(r.finishedAtMs)}</td><td class="err">${r.error}</td>
          </tr>`)}</tbody>
        </table>${data.runs.length === 0
          ? html`<p class="muted">No dead letters.</p>`
          : html`<p class="muted" data-testid="dead-count">${data.runs.length} dead letter${data.runs.length === 1 ? '' : 's'} shown${data.nextPageToken
              ? html`, older ones beyond. <button type="button" data-testid="dead-more" onClick=${() => setPages(pages + 1)}>Show ${PAGE_SIZE} more</button>`
              : ', all of them.'}</p>`}</div>`
      : error ? null : html`<${Loading} what="dead letters" />`}
  `;
}
