/**
 * A recurring job's rule between the library's plain shapes (RecurrenceInput
 * in, RecurrenceInfo out) and the wire's Recurrence message. Pure.
 *
 * Checked here, before sending: the combinations the types cannot rule out
 * (exactly one of cron / everyMs; cron-only and interval-only fields not
 * mixed; no at/delayMs beside a rule) and that numbers fit their wire types
 * (a uint32 would wrap silently). Ranges are the daemon's to judge: it
 * answers INVALID_ARGUMENT naming the field.
 */
import type { CatchUpMode, CatchUpMode__Output } from '../proto/gen/timelane/v1/CatchUpMode.js';
import type { DstGapPolicy } from '../proto/gen/timelane/v1/DstGapPolicy.js';
import type { DstRepeatPolicy } from '../proto/gen/timelane/v1/DstRepeatPolicy.js';
import type { JobKind, JobKind__Output } from '../proto/gen/timelane/v1/JobKind.js';
import type { OverlapPolicy, OverlapPolicy__Output } from '../proto/gen/timelane/v1/OverlapPolicy.js';
import type { Recurrence, Recurrence__Output } from '../proto/gen/timelane/v1/Recurrence.js';
import type { CatchUpModeName, JobKindName, OverlapPolicyName, RecurrenceInfo, RecurrenceInput } from './types.js';
import { wholeNumber } from './wire-numbers.js';

const OVERLAP_TO_WIRE: Record<OverlapPolicyName, OverlapPolicy> = {
  skip: 'OVERLAP_SKIP',
  buffer_one: 'OVERLAP_BUFFER_ONE',
  buffer_all: 'OVERLAP_BUFFER_ALL',
  cancel_other: 'OVERLAP_CANCEL_OTHER',
  allow_all: 'OVERLAP_ALLOW_ALL',
};
const OVERLAP_NAME: Record<OverlapPolicy__Output, OverlapPolicyName> = {
  OVERLAP_UNSPECIFIED: 'skip',
  OVERLAP_SKIP: 'skip',
  OVERLAP_BUFFER_ONE: 'buffer_one',
  OVERLAP_BUFFER_ALL: 'buffer_all',
  OVERLAP_CANCEL_OTHER: 'cancel_other',
  OVERLAP_ALLOW_ALL: 'allow_all',
};
const CATCH_UP_TO_WIRE: Record<CatchUpModeName, CatchUpMode> = { fire_all: 'CATCH_UP_FIRE_ALL', fire_once: 'CATCH_UP_FIRE_ONCE' };
const CATCH_UP_NAME: Record<CatchUpMode__Output, CatchUpModeName> = {
  CATCH_UP_UNSPECIFIED: 'fire_all',
  CATCH_UP_FIRE_ALL: 'fire_all',
  CATCH_UP_FIRE_ONCE: 'fire_once',
};
const DST_GAP_TO_WIRE: Record<'shift' | 'skip', DstGapPolicy> = { shift: 'DST_GAP_SHIFT', skip: 'DST_GAP_SKIP' };
const DST_REPEAT_TO_WIRE: Record<'once' | 'twice', DstRepeatPolicy> = { once: 'DST_REPEAT_ONCE', twice: 'DST_REPEAT_TWICE' };

const JOB_KIND_NAME: Record<JobKind__Output, JobKindName> = {
  JOB_KIND_UNSPECIFIED: 'unspecified',
  JOB_ONCE: 'once',
  JOB_CRON: 'cron',
  JOB_INTERVAL: 'interval',
};
const JOB_KIND_TO_WIRE: Record<JobKindName, JobKind> = {
  unspecified: 'JOB_KIND_UNSPECIFIED',
  once: 'JOB_ONCE',
  cron: 'JOB_CRON',
  interval: 'JOB_INTERVAL',
};

export function jobKindName(kind: JobKind__Output): JobKindName {
  return JOB_KIND_NAME[kind] ?? 'unspecified';
}

export function jobKindToWire(kind: JobKindName | undefined): JobKind {
  if (kind === undefined) return 'JOB_KIND_UNSPECIFIED';
  const wire = JOB_KIND_TO_WIRE[kind];
  if (!wire) throw new RangeError(`kind: unknown job kind "${String(kind)}"`);
  return wire;
}

/** A value the enum table knows, or a RangeError naming the field. */
function known<K extends string, V>(field: string, table: Record<K, V>, value: K): V {
  if (!Object.prototype.hasOwnProperty.call(table, value)) throw new RangeError(`${field}: must be one of ${Object.keys(table).join(', ')} (got ${JSON.stringify(value)})`);
  return table[value];
}

/** A whole, non-negative number of ms (or instant) for an int64/uint64 field. */
function wholeNonNegative(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field}: must be a non-negative integer (got ${value})`);
  return value;
}

/** A required uint32 field: protobufjs would wrap anything outside 0..2^32-1 silently, and send nothing as 0. */
export function uint32(field: string, value: number): number {
  if (value === undefined || value === null) throw new RangeError(`${field}: is required`);
  return wholeNumber(field, value, 'uint32');
}

/** An instant (a Date or epoch ms) as whole, non-negative epoch ms; anything else is a RangeError naming `field`. */
export function instantMs(field: string, value: Date | number): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (!Number.isFinite(ms)) throw new RangeError(`${field}: must be a valid instant`);
  return wholeNonNegative(field, Math.round(ms));
}

/** The Recurrence message for `r`, holding only what differs from the defaults. Throws TypeError / RangeError on bad input. */
export function recurrenceToWire(r: RecurrenceInput, prefix = 'recurrence.'): Recurrence {
  const isCron = r.cron !== undefined;
  const isInterval = r.everyMs !== undefined;
  if (isCron === isInterval) throw new TypeError(`${prefix}cron, ${prefix}everyMs: give exactly one (a cron expression or a period)`);
  const out: Recurrence = {};
  if (isCron) {
    if (r.phaseMs !== undefined) throw new TypeError(`${prefix}phaseMs: is for everyMs, not cron`);
    if (typeof r.cron !== 'string' || r.cron.trim() === '') throw new TypeError(`${prefix}cron: must be a non-empty cron expression`);
    out.cron = { expression: r.cron };
    if (r.timeZone) out.cron.timeZone = r.timeZone;
    if (r.dstGap !== undefined) out.cron.dstGap = known(`${prefix}dstGap`, DST_GAP_TO_WIRE, r.dstGap);
    if (r.dstRepeat !== undefined) out.cron.dstRepeat = known(`${prefix}dstRepeat`, DST_REPEAT_TO_WIRE, r.dstRepeat);
  } else {
    const cronOnly = (['timeZone', 'dstGap', 'dstRepeat'] as const).filter((k) => r[k] !== undefined);
    if (cronOnly.length > 0) throw new TypeError(`${prefix}${cronOnly[0]}: is for cron, not everyMs`);
    out.interval = { everyMs: wholeNonNegative(`${prefix}everyMs`, r.everyMs as number) };
    if (r.phaseMs !== undefined) out.interval.phaseMs = wholeNonNegative(`${prefix}phaseMs`, r.phaseMs);
  }
  if (r.startAt !== undefined) out.startAtMs = instantMs(`${prefix}startAt`, r.startAt);
  if (r.endAt !== undefined) out.endAtMs = instantMs(`${prefix}endAt`, r.endAt);
  if (r.jitterMs !== undefined) out.jitterMs = uint32(`${prefix}jitterMs`, r.jitterMs);
  if (r.limit !== undefined) out.limit = uint32(`${prefix}limit`, r.limit);
  if (r.overlap !== undefined) out.overlap = known(`${prefix}overlap`, OVERLAP_TO_WIRE, r.overlap);
  if (r.catchUp) {
    const c = r.catchUp;
    out.catchUp = {};
    if (c.windowMs !== undefined) out.catchUp.windowMs = wholeNonNegative(`${prefix}catchUp.windowMs`, c.windowMs);
    if (c.mode !== undefined) out.catchUp.mode = known(`${prefix}catchUp.mode`, CATCH_UP_TO_WIRE, c.mode);
    if (c.maxRuns !== undefined) out.catchUp.maxRuns = uint32(`${prefix}catchUp.maxRuns`, c.maxRuns);
  }
  if (r.pauseOnFailure) out.pauseOnFailure = true;
  return out;
}

/** The rule as the daemon reports it; null when the message is absent (one-shot job). */
export function recurrenceInfo(m: Recurrence__Output | null | undefined): RecurrenceInfo | null {
  if (!m) return null;
  const cron = m.cadence === 'cron' && m.cron ? m.cron : null;
  const interval = m.cadence === 'interval' && m.interval ? m.interval : null;
  return {
    cron: cron
      ? {
          expression: cron.expression,
          timeZone: cron.timeZone || 'UTC',
          dstGap: cron.dstGap === 'DST_GAP_SKIP' ? 'skip' : 'shift',
          dstRepeat: cron.dstRepeat === 'DST_REPEAT_TWICE' ? 'twice' : 'once',
        }
      : null,
    interval: interval ? { everyMs: Number(interval.everyMs), phaseMs: Number(interval.phaseMs) } : null,
    startAtMs: Number(m.startAtMs || 0),
    endAtMs: Number(m.endAtMs || 0),
    jitterMs: m.jitterMs,
    limit: m.limit,
    overlap: OVERLAP_NAME[m.overlap] ?? 'skip',
    catchUp: {
      windowMs: Number(m.catchUp?.windowMs || 0),
      mode: CATCH_UP_NAME[m.catchUp?.mode ?? 'CATCH_UP_UNSPECIFIED'] ?? 'fire_all',
      maxRuns: m.catchUp?.maxRuns ?? 0,
    },
    pauseOnFailure: m.pauseOnFailure,
  };
}
