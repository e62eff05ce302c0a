// Pieces every page uses: the error notice and a label/value card.
import { html } from '../vendor/htm-preact.mjs';

export function ErrorNotice({ error }) {
  if (!error) return null;
  return html`<div class="notice error" role="alert">${error.status ? `HTTP ${error.status}: ` : ''}${error.message}</div>`;
}

export function Card({ label, value, id, title }) {
  return html`<div class="card" data-testid=${id} title=${title}><div class="label">${label}</div><div class="value">${value}</div></div>`;
}

export function Loading({ what }) {
  return html`<p class="muted">Loading ${what}…</p>`;
}
