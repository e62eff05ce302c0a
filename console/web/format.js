// Formatting shared by the pages: times, durations, counts.
import { html } from './vendor/htm-preact.mjs';

export function isoTime(ms) {
  if (!ms) return '–';
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** Time of day with ms ("22:46:35.099"), the date too when not today; full ISO in the title. */
export function clock(ms) {
  if (!ms) return '–';
  const iso = isoTime(ms);
  const today = isoTime(Date.now()).slice(0, 10);
  return html`<span title=${iso}>${iso.startsWith(today) ? iso.slice(11) : iso.slice(5)}</span>`;
}

/** "in 2m 3s" / "5s ago". */
export function relative(ms, now = Date.now()) {
  if (!ms) return '–';
  const d = ms - now;
  const text = duration(Math.abs(d));
  return d >= 0 ? `in ${text}` : `${text} ago`;
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ${m % 60}m` : `${Math.floor(h / 24)}d ${h % 24}h`;
}

export function count(n, capped) {
  return capped ? `≥${n}` : String(n);
}

export function badge(text) {
  return html`<span class="badge ${text}">${text}</span>`;
}

/** A recurring job's rule in one line; '' for a one-shot job. */
export function ruleText(job) {
  const r = job.recurrence;
  if (!r) return '';
  if (r.cron) return `cron "${r.cron.expression}" ${r.cron.timeZone}`;
  if (r.interval) return `every ${duration(r.interval.everyMs)}${r.interval.phaseMs ? ` (+${duration(r.interval.phaseMs)})` : ''}`;
  return '';
}

/** A long id's last 8 characters: a job id's first ones are its creation time (UUIDv7), the same for a minute's jobs. */
export function shortId(id) {
  return id && id.length > 13 ? `…${id.slice(-8)}` : id;
}
