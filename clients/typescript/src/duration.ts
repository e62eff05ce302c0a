/**
 * Parsing of the CLI's time arguments. Pure functions.
 *
 * Durations: one or more `<number><unit>` parts, units ms, s, m, h, d
 * ("500ms", "2s", "1.5m", "1h30m", "1d 2h"). "0" alone is allowed; any other
 * bare number is rejected (is "5" seconds or ms?). The result is whole
 * milliseconds, rounded.
 */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)/y;

/** Parses a duration such as "500ms", "2s", "1m", "1h", "1h30m" into milliseconds. */
export function parseDuration(text: string): number {
  const s = text.trim().toLowerCase();
  if (s === '0') return 0;
  if (s === '') throw new RangeError('duration: empty');
  if (/^\d+(\.\d+)?$/.test(s)) {
    throw new RangeError(`duration "${text}": missing unit (use ms, s, m, h or d, e.g. "${s}ms" or "${s}s")`);
  }
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    PART.lastIndex = pos;
    const m = PART.exec(s);
    if (!m) throw new RangeError(`duration "${text}": expected <number><unit> (units ms, s, m, h, d) at "${s.slice(pos)}"`);
    total += Number(m[1]) * UNIT_MS[m[2]];
    pos = PART.lastIndex;
    while (s[pos] === ' ') pos++;
  }
  const ms = Math.round(total);
  if (!Number.isSafeInteger(ms)) throw new RangeError(`duration "${text}": too large`);
  return ms;
}

/**
 * Parses an ISO-8601 instant ("2030-01-01T10:00:00.000Z",
 * "2030-01-01T10:00:00+02:00") into epoch ms. As with `Date.parse`, a
 * date-time without an offset is local time and a bare date is UTC midnight.
 */
export function parseInstant(text: string): number {
  const s = text.trim().toUpperCase().replace(' ', 'T');
  const m = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (!m) throw new RangeError(`time "${text}": expected ISO-8601, e.g. 2030-01-01T10:00:00.000Z`);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  const ms = Date.parse(s);
  if (Number.isNaN(ms) || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    throw new RangeError(`time "${text}": not a valid date`);
  }
  return ms;
}

/** Formats milliseconds compactly: 950 → "950ms", 1500 → "1.5s", 90000 → "1m30s". */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1_000) return `${sign}${+rest.toFixed(1)}ms`;
  if (rest < 60_000) return `${sign}${+(rest / 1_000).toFixed(3)}s`;
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${+(rest / 1_000).toFixed(3)}s`);
  return sign + parts.join('');
}
