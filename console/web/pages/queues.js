// Queues: run depth by status (counted through ListRuns, capped), limits and
// worker streams subscribed on this member.
import { html } from '../vendor/htm-preact.mjs';
import { getJson, usePoll } from '../api.js';
import { count } from '../format.js';
import { ErrorNotice, Loading } from './common.js';

const STATUSES = [
  ['scheduled', 'scheduled'],
  ['buffered', 'buffered'],
  ['fired', 'in flight'],
  ['completed', 'completed'],
  ['failed', 'failed'],
  ['dead', 'dead'],
  ['cancelled', 'cancelled'],
];

function limitText(l) {
  if (!l) return '–';
  const parts = [];
  if (l.maxInFlight) parts.push(`${l.maxInFlight} in flight`);
  if (l.maxPerSecond) parts.push(`${l.maxPerSecond}/s`);
  return parts.join(', ') || '–';
}

export function QueuesPage() {
  const { data, error } = usePoll(() => getJson('queues'), 3000);
  if (!data) return html`<h1>Queues</h1><${ErrorNotice} error=${error} />${error ? null : html`<${Loading} what="queues" />`}`;
  return html`
    <h1>Queues</h1>
    <${ErrorNotice} error=${error} />
    <div class="panel">
      <table data-testid="queues">
        <thead><tr><th>queue</th>${STATUSES.map(([, label]) => html`<th class="num">${label}</th>`)}<th>limits</th><th class="num">workers here</th></tr></thead>
        <tbody>${data.queues.map((q) => html`<tr data-queue=${q.queue}>
          <td><a href=${`#/runs?queue=${encodeURIComponent(q.queue)}`}>${q.queue}</a></td>
          ${STATUSES.map(([status]) => html`<td class="num" data-status=${status}>${
            status === 'dead' && q.counts.dead > 0
              ? html`<a href=${`#/dead?queue=${encodeURIComponent(q.queue)}`}>${count(q.counts.dead, q.capped.includes('dead'))}</a>`
              : count(q.counts[status], q.capped.includes(status))
          }</td>`)}
          <td>${limitText(q.limits)}</td>
          <td class="num">${q.workerStreamsHere}</td>
        </tr>`)}</tbody>
      </table>
      ${data.queuesCapped ? html`<p class="muted" data-testid="queues-capped">Showing the first ${data.queues.length} queues by name; there are more (\`timelane queues\` lists them all).</p>` : ''}
      <p class="muted">Counts read at most ${data.caps.scheduled} runs per queue for scheduled, buffered, in flight and dead, ${data.caps.completed} for completed, failed and cancelled (≥ marks a count at its cap). ${data.allQueueStreamsHere ? `${data.allQueueStreamsHere} worker stream(s) on this member take every queue.` : ''}</p>
    </div>
  `;
}
