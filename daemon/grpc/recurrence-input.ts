/**
 * A Recurrence message, validated into the domain rule (recurring/recurrence.ts)
 * and back. Every refusal is INVALID_ARGUMENT naming the field, e.g.
 * "recurrence.cron.time_zone: unknown IANA time zone".
 */
import { invalidArgument } from '../errors.js';
import { CadenceError, validateCadence, type Cadence } from '../recurring/cadence.js';
import { DEFAULT_CATCH_UP, firstOccurrence, type OverlapPolicy, type Recurrence } from '../recurring/recurrence.js';
import type { Recurrence as WireRecurrence, Recurrence__Output } from '../../proto/gen/timelane/v1/Recurrence.js';

const DAY_MS = 86_400_000;
const TEN_YEARS_MS = 3_650 * DAY_MS;

const OVERLAP: Record<string, OverlapPolicy> = {
  OVERLAP_UNSPECIFIED: 'skip',
  OVERLAP_SKIP: 'skip',
  OVERLAP_BUFFER_ONE: 'buffer_one',
  OVERLAP_BUFFER_ALL: 'buffer_all',
  OVERLAP_CANCEL_OTHER: 'cancel_other',
  OVERLAP_ALLOW_ALL: 'allow_all',
};
const OVERLAP_WIRE = {
  skip: 'OVERLAP_SKIP',
  buffer_one: 'OVERLAP_BUFFER_ONE',
  buffer_all: 'OVERLAP_BUFFER_ALL',
  cancel_other: 'OVERLAP_CANCEL_OTHER',
  allow_all: 'OVERLAP_ALLOW_ALL',
} as const;

function enumOf<T>(field: string, table: Record<string, T>, v: unknown): T {
  if (typeof v !== 'string' || !(v in table)) throw invalidArgument(field, `unknown enum value ${String(v)}`);
  return table[v];
}

function epochMs(field: string, v: string): number | null {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw invalidArgument(field, `must be epoch ms >= 0 (got "${v}")`);
  return n === 0 ? null : n;
}

function cadenceOf(p: string, m: Recurrence__Output): Cadence {
  const where = (e: CadenceError): string =>
    ({ cron: `${p}cron.expression`, tz: `${p}cron.time_zone`, every_ms: `${p}interval.every_ms`, phase_ms: `${p}interval.phase_ms` })[e.field] ?? `${p}cadence`;
  let c: Cadence;
  if (m.cadence === 'cron' && m.cron) {
    const expr = m.cron.expression.trim();
    if (!expr) throw invalidArgument(`${p}cron.expression`, 'is required');
    c = {
      kind: 'cron',
      expr,
      tz: m.cron.timeZone || 'UTC',
      dstGap: enumOf(`${p}cron.dst_gap`, { DST_GAP_UNSPECIFIED: 'shift', DST_GAP_SHIFT: 'shift', DST_GAP_SKIP: 'skip' } as const, m.cron.dstGap),
      dstRepeat: enumOf(`${p}cron.dst_repeat`, { DST_REPEAT_UNSPECIFIED: 'once', DST_REPEAT_ONCE: 'once', DST_REPEAT_TWICE: 'twice' } as const, m.cron.dstRepeat),
    };
  } else if (m.cadence === 'interval' && m.interval) {
    const every = Number(m.interval.everyMs);
    const phase = Number(m.interval.phaseMs);
    c = { kind: 'interval', everyMs: every, phaseMs: phase };
  } else {
    throw invalidArgument(`${p}cadence`, 'exactly one of cron or interval is required');
  }
  try {
    validateCadence(c);
  } catch (err) {
    if (err instanceof CadenceError) throw invalidArgument(where(err), err.message);
    throw err;
  }
  return c;
}

/** Validates a Recurrence; `nowMs` checks that it has an occurrence to come. */
export function recurrenceInput(prefix: string, m: Recurrence__Output, nowMs: number): Recurrence {
  const p = `${prefix}recurrence.`;
  const cadence = cadenceOf(p, m);
  const startAtMs = epochMs(`${p}start_at_ms`, m.startAtMs);
  const endAtMs = epochMs(`${p}end_at_ms`, m.endAtMs);
  if (startAtMs !== null && startAtMs > nowMs + TEN_YEARS_MS) throw invalidArgument(`${p}start_at_ms`, 'must be at most 10 years ahead');
  if (endAtMs !== null && endAtMs <= nowMs) throw invalidArgument(`${p}end_at_ms`, 'must be in the future');
  if (startAtMs !== null && endAtMs !== null && endAtMs < startAtMs) throw invalidArgument(`${p}end_at_ms`, 'must not be before start_at_ms');
  if (m.jitterMs > 3_600_000) throw invalidArgument(`${p}jitter_ms`, `must be at most 3600000 (got ${m.jitterMs})`);
  const c = m.catchUp;
  const windowMs = c && Number(c.windowMs) > 0 ? Number(c.windowMs) : DEFAULT_CATCH_UP.windowMs;
  if (windowMs > 7 * DAY_MS) throw invalidArgument(`${p}catch_up.window_ms`, `must be at most 7 days (${7 * DAY_MS})`);
  const maxRuns = c && c.maxRuns > 0 ? c.maxRuns : DEFAULT_CATCH_UP.maxRuns;
  if (maxRuns > 10_000) throw invalidArgument(`${p}catch_up.max_runs`, `must be at most 10000 (got ${maxRuns})`);
  const mode = enumOf(`${p}catch_up.mode`, { CATCH_UP_UNSPECIFIED: 'fire_all', CATCH_UP_FIRE_ALL: 'fire_all', CATCH_UP_FIRE_ONCE: 'fire_once' } as const, c?.mode ?? 'CATCH_UP_UNSPECIFIED');
  const rule: Recurrence = {
    cadence,
    startAtMs,
    endAtMs,
    jitterMs: m.jitterMs,
    limit: m.limit > 0 ? m.limit : null,
    overlap: enumOf(`${p}overlap`, OVERLAP, m.overlap),
    catchUp: { windowMs, mode, maxRuns },
    pauseOnFailure: m.pauseOnFailure,
  };
  if (firstOccurrence(rule, nowMs) === null) throw invalidArgument(`${prefix}recurrence`, 'has no occurrence after now (check the cadence and end_at_ms)');
  return rule;
}

/** The rule as the wire shows it (every default spelled out). */
export function recurrenceToWire(r: Recurrence): WireRecurrence {
  const c = r.cadence;
  return {
    ...(c.kind === 'cron'
      ? {
          cron: {
            expression: c.expr,
            timeZone: c.tz,
            dstGap: c.dstGap === 'shift' ? 'DST_GAP_SHIFT' : 'DST_GAP_SKIP',
            dstRepeat: c.dstRepeat === 'once' ? 'DST_REPEAT_ONCE' : 'DST_REPEAT_TWICE',
          },
        }
      : { interval: { everyMs: String(c.everyMs), phaseMs: String(c.phaseMs) } }),
    startAtMs: String(r.startAtMs ?? 0),
    endAtMs: String(r.endAtMs ?? 0),
    jitterMs: r.jitterMs,
    limit: r.limit ?? 0,
    overlap: OVERLAP_WIRE[r.overlap],
    catchUp: { windowMs: String(r.catchUp.windowMs), mode: r.catchUp.mode === 'fire_all' ? 'CATCH_UP_FIRE_ALL' : 'CATCH_UP_FIRE_ONCE', maxRuns: r.catchUp.maxRuns },
    pauseOnFailure: r.pauseOnFailure,
  };
}
