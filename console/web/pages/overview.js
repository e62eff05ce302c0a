// Overview: fires/s and fire lag over the last minutes (this member's
// sampled metrics), the lag histogram, runs due soon and problems (cluster).
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, usePoll } from '../api.js';
import { BarChart, TimeChart } from '../charts.js';
import { duration } from '../format.js';
import { Card, ErrorNotice, Loading } from './common.js';

/** A bucket's upper bound, short enough for 17 labels side by side: 0.25, 5, 250, 1s, 30s, >30s. */
function lagLabel(bounds, i) {
  const text = (ms) => (ms >= 1000 ? `${ms / 1000}s` : String(ms));
  return i >= bounds.length ? `>${text(bounds[bounds.length - 1])}` : text(bounds[i]);
}

function lastValue(values) {
  for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null) return values[i];
  return null;
}

export function OverviewPage() {
  const [minutes, setMinutes] = useState(5);
  const { data, error } = usePoll(() => getJson('overview', { minutes }), 2000, [minutes]);
  if (!data) return html`<h1>Overview</h1><${ErrorNotice} error=${error} />${error ? null : html`<${Loading} what="the overview" />`}`;
  const s = data.series;
  const h = data.lagHistogram;
  const fired = h.counts.reduce((a, b) => a + b, 0);
  const due = data.dueSoon;
  const here = data.here ?? {};
  return html`
    <h1>Overview</h1>
    <${ErrorNotice} error=${error} />
    <div class="panel">
      <h2>Problems</h2>
      <ul class="problems" data-testid="problems">
        ${data.problems.length === 0 ? html`<li class="ok">No problems: every shard has an owner, nothing overdue, no dead letters.</li>` : data.problems.map((p) => html`<li class=${p.severity} data-kind=${p.kind}>${p.message}</li>`)}
      </ul>
    </div>
    <h2>Now</h2>
    <div class="cards">
      <${Card} id="card-fires" label="fires/s (this member)" value=${(lastValue(s.firesPerSec) ?? 0).toFixed(1)} />
      <${Card} id="card-p50" label=${`lag p50 (${minutes} min)`} value=${duration(h.p50Ms)} />
      <${Card} id="card-p99" label=${`lag p99 (${minutes} min)`} value=${duration(h.p99Ms)} />
      <${Card} id="card-fired" label=${`fired (${minutes} min, this member)`} value=${fired} />
      <${Card} id="card-window" label="runs in window (this member)" value=${here.runsInWindow ?? '–'} />
      <${Card} id="card-workers" label="worker streams (this member)" value=${here.workerStreams ?? '–'} />
      <${Card} id="card-shards" label="shards owned / total" value=${`${data.shards.total - data.shards.unowned} / ${data.shards.total}`} />
      <${Card} id="card-members" label="members" value=${data.members} />
      <${Card} id="card-dead" label="dead letters" value=${`${data.deadLetters.count}${data.deadLetters.capped ? '+' : ''}`} />
      <${Card} id="card-skew" label="clock skew vs Postgres" value=${duration(Math.abs(here.clockSkewMs ?? 0))} />
    </div>
    <p class="muted">
      Over the last
      <select value=${minutes} onChange=${(e) => setMinutes(Number(e.target.value))} data-testid="minutes">
        ${[1, 5, 10].map((m) => html`<option value=${m}>${m} min</option>`)}
      </select>
      . Rates, lag and streams are this member's (${data.memberId}), sampled every second; shards, dead letters and due runs are the whole cluster's.
    </p>
    <div class="grid2">
      <div class="panel"><h2>Fires per second</h2>
        <${TimeChart} id="chart-fires" t=${s.tMs} lines=${[{ label: 'fires/s', values: s.firesPerSec, unit: '/s' }]} />
      </div>
      <div class="panel"><h2>Fire lag percentiles (ms, trailing 5 s)</h2>
        <${TimeChart} id="chart-lag" t=${s.tMs} lines=${[{ label: 'p50', values: s.lagP50Ms, unit: ' ms' }, { label: 'p99', values: s.lagP99Ms, unit: ' ms' }]} />
      </div>
      <div class="panel"><h2>Fire lag histogram (ms, upper bound of each bucket; ${fired} fires)</h2>
        <${BarChart} id="chart-lag-histogram" label="fires" labels=${h.counts.map((_, i) => lagLabel(h.boundsMs, i))} values=${h.counts} />
      </div>
      <div class="panel"><h2>Runs due in the next ${due.counts.length} minutes${due.partial ? ' (at least)' : ''}</h2>
        <${BarChart} id="chart-due" label="runs" labels=${due.counts.map((_, i) => `+${i + 1}m`)} values=${due.counts} />
        <p class="muted" data-testid="overdue">${due.overdue} scheduled run${due.overdue === 1 ? '' : 's'} past due, not fired yet.</p>
      </div>
    </div>
  `;
}
