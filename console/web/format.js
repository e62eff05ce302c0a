// Formatting shared by the pages: times, durations, counts.
import { html } from './vendor/htm-preact.mjs';

/*
 * One time zone throughout, UTC, and it says so: tables label their time
 * columns "(UTC)", full times end in " UTC", charts' time axes are UTC, and
 * the Runs page reads its due range as UTC. A time copied from any page
 * finds the same instant on another, whatever the browser's own zone.
 */

/** "2026-11-25 17:31:45.123" (UTC, no marker: for cells under a column that names the zone). */
function utcText(ms) {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** "2026-11-25 17:31:45.123 UTC". */
export function isoTime(ms) {
  if (!ms) return '–';
  return `${utcText(ms)} UTC`;
}

/** Time of day with ms ("22:46:35.099"), the date too when not today (UTC); the full time in the title. For columns labelled "(UTC)". */
export function clock(ms) {
  if (!ms) return '–';
  const text = utcText(ms);
  const today = utcText(Date.now()).slice(0, 10);
  return html`<span title=${`${text} UTC`}>${text.startsWith(today) ? text.slice(11) : text.slice(5)}</span>`;
}

const INPUT_TIME_RE = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,3}))?)?$/;

/**
 * A datetime-local input's value ("2026-11-25T17:31" or "…T17:31:05") read as
 * UTC, as an ISO instant; '' for ''. Anything else (an instant with its own
 * zone, or a typo in a shared URL) is passed on as is, for the API to accept
 * or refuse by name.
 */
export function utcInputToIso(value) {
  if (!value) return '';
  const m = INPUT_TIME_RE.exec(value);
  if (!m) return value;
  const [y, mo, d, h, mi, s = '0', frac = '0'] = m.slice(1);
  return new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0')))).toISOString();
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
