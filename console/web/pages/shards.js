// Shards & members: the shard map, the members, and the operator actions
// (move, drain, undo drain, rebalance) with their progress.
import { html, useState } from '../vendor/htm-preact.mjs';
import { getJson, postJson, usePoll } from '../api.js';
import { duration, isoTime, relative, badge } from '../format.js';
import { ErrorNotice, Loading } from './common.js';

function Operations({ ops, movesPending, total }) {
  const running = ops.some((o) => o.state === 'running');
  return html`
    <div class="panel">
      <h2>Operations</h2>
      ${running || movesPending > 0
        ? html`<p data-testid="moves-progress">${movesPending} shard${movesPending === 1 ? '' : 's'} not yet on their assigned owner
            <progress max=${total} value=${total - movesPending}></progress></p>`
        : html`<p class="muted">Every shard is on its assigned owner.</p>`}
      ${ops.length === 0
        ? html`<p class="muted">No operation started from this console yet.</p>`
        : html`<table data-testid="operations">
            <thead><tr><th>#</th><th>action</th><th>target</th><th>state</th><th>started</th><th>took</th><th>outcome</th></tr></thead>
            <tbody>${ops.map((o) => html`<tr><td>${o.id}</td><td>${o.kind}</td><td>${o.target}</td><td>${badge(o.state)}</td><td>${relative(o.startedAtMs)}</td><td>${o.finishedAtMs ? duration(o.finishedAtMs - o.startedAtMs) : '…'}</td><td class=${o.state === 'failed' ? 'err' : ''}>${o.summary}</td></tr>`)}</tbody>
          </table>`}
    </div>
  `;
}

export function ShardsPage() {
  const map = usePoll(() => getJson('shards'), 2000);
  const ops = usePoll(() => getJson('operations'), 1000);
  const [actionError, setActionError] = useState(null);
  const [moveShard, setMoveShard] = useState('');
  const [moveTo, setMoveTo] = useState('');
  const act = (path, body) => {
    setActionError(null);
    postJson(path, body).then(() => (ops.reload(), map.reload()), setActionError);
  };
  const data = map.data;
  if (!data) return html`<h1>Shards & members</h1><${ErrorNotice} error=${map.error} />${map.error ? null : html`<${Loading} what="the shard map" />`}`;
  const unowned = data.shards.filter((s) => !s.owner).length;
  return html`
    <h1>Shards & members</h1>
    <${ErrorNotice} error=${map.error ?? actionError} />
    <div class="panel">
      <h2>Members (${data.members.length})</h2>
      ${data.members.length === 0
        ? html`<p class="muted">No cluster membership (single node with Postgres leases): moves, drains and rebalancing need Redis.</p>`
        : html`<table data-testid="members">
            <thead><tr><th>member</th><th>gRPC address</th><th class="num">shards</th><th>started</th><th>last seen</th><th></th></tr></thead>
            <tbody>${data.members.map((m) => html`<tr data-member=${m.id}>
              <td>${m.id}${m.id === data.memberId ? html` <span class="badge">serving this console</span>` : null}</td>
              <td class="mono">${m.grpcAddress}</td><td class="num">${m.ownedShards}</td>
              <td>${relative(m.startedAtMs)}</td><td>${relative(m.lastSeenMs)}</td>
              <td class="actions">
                <button onClick=${() => act(`members/${encodeURIComponent(m.id)}/drain`, {})}>Drain</button>
                <button onClick=${() => act(`members/${encodeURIComponent(m.id)}/drain`, { undo: true })}>Undo drain</button>
              </td></tr>`)}</tbody>
          </table>`}
      <div class="actions" style="margin-top:10px">
        <button class="primary" data-testid="rebalance" onClick=${() => act('rebalance', {})}>Rebalance</button>
        <select value=${moveShard} onChange=${(e) => setMoveShard(e.target.value)} aria-label="shard to move">
          <option value="">shard…</option>${data.shards.map((s) => html`<option value=${s.shard}>shard ${s.shard}</option>`)}
        </select>
        <select value=${moveTo} onChange=${(e) => setMoveTo(e.target.value)} aria-label="member to move to">
          <option value="">to member…</option>${data.members.map((m) => html`<option value=${m.id}>${m.id}</option>`)}
        </select>
        <button disabled=${moveShard === '' || !moveTo} onClick=${() => act(`shards/${moveShard}/move`, { toMember: moveTo })}>Move</button>
      </div>
    </div>
    ${ops.data ? html`<${Operations} ops=${ops.data} movesPending=${data.movesPending} total=${data.shards.length} />` : null}
    <div class="panel">
      <h2>Shard map (${data.shards.length} shards${unowned ? `, ${unowned} without owner` : ''})</h2>
      <table data-testid="shards">
        <thead><tr><th class="num">shard</th><th>owner</th><th>assigned to</th><th class="num">fence</th><th>lease age</th><th class="num">runs in window</th><th>next due</th><th>lag</th></tr></thead>
        <tbody>${data.shards.map((s) => html`<tr>
          <td class="num">${s.shard}</td>
          <td>${s.owner || html`<span class="badge error">no owner</span>`}</td>
          <td>${s.assignedTo || '–'}${s.assignedTo && s.assignedTo !== s.owner ? html` <span class="badge running">moving</span>` : null}</td>
          <td class="num">${s.fence}</td>
          <td>${s.owner ? duration(s.leaseAgeMs) : '–'}</td>
          <td class="num" title=${s.ownedHere ? '' : 'only the owner knows'}>${s.ownedHere ? s.runsInWindow : '–'}</td>
          <td title=${isoTime(s.nextDueAtMs)}>${relative(s.nextDueAtMs)}</td>
          <td>${s.lagMs ? html`<span class="badge error">${duration(s.lagMs)}</span>` : '0'}</td>
        </tr>`)}</tbody>
      </table>
    </div>
  `;
}
