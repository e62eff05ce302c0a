/**
 * Cadence — when a recurring job's occurrences fall. Pure: no clock, no I/O;
 * every function maps (cadence, instant) to instants in epoch ms.
 *
 * Owns: two process-wide memo tables, bounded and invisible in results —
 * per cron expression (LRU by text), windows of its matches read from
 * cron-parser (`CronMatches`); per zone name, the luxon zone and the spans
 * of time where its offset is known (`ZoneOffsets`). They exist because
 * nextOccurrence runs thousands of times a second: cron-parser costs tens of
 * µs per match and an Intl offset lookup about 5 µs.
 *
 * Invariants:
 * - Occurrences are a pure function of the cadence, never of when we ask:
 *   `nextOccurrence(c, t)` is the smallest occurrence strictly after t, so
 *   walking t → nextOccurrence(c, t) from any (late) fire time lands on the
 *   same instants every time — no drift, no repeats, no holes beyond policy.
 * - interval: the occurrences are exactly phaseMs + k·everyMs for integer k,
 *   aligned to the Unix epoch (integer arithmetic only).
 * - cron: the expression is matched against local *wall-clock* time in `tz`,
 *   and mapping a wall time to instants is our policy, not cron-parser's:
 *   cron-parser only ever runs in UTC over wall times encoded as UTC ms.
 *   A wall time that exists once fires once. One that does not exist (spring
 *   forward) fires at the first instant after the gap (`shift`: the
 *   transition instant, shared by every wall time in the gap, so it is one
 *   occurrence) or not at all (`skip`). One that exists twice (fall back)
 *   fires at the earlier instant (`once`) or at both (`twice`).
 * - jitter is a pure function of (jobId, nominalMs): re-materialising an
 *   occurrence after a crash gives the same due time.
 *
 * Assumption about tzdata: a zone changes offset at most once in any two
 * days, and by at most 3 hours when the clock goes back (forward jumps, such
 * as Samoa's 24 h in 2011, may be any size). A scan of all 418 zones of
 * Node 20's ICU for 1970–2037 found one exception, Antarctica/Vostok going
 * back 7 h in 1994.
 *
 * The hash behind `jitterMs` and the seed of cron-parser's `H` are part of
 * the stored schedule's meaning: changing either moves due times of runs
 * already promised to users.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { FixedOffsetZone, IANAZone, type Zone } from 'luxon';

export type DstGapPolicy = 'shift' | 'skip'; // local time that does not exist (spring forward)
export type DstRepeatPolicy = 'once' | 'twice'; // local time that happens twice (fall back)
export type Cadence =
  | { kind: 'cron'; expr: string; tz: string; dstGap: DstGapPolicy; dstRepeat: DstRepeatPolicy }
  | { kind: 'interval'; everyMs: number; phaseMs: number };

type CronCadence = Extract<Cadence, { kind: 'cron' }>;
type IntervalCadence = Extract<Cadence, { kind: 'interval' }>;

/**
 * Thrown by validateCadence; `field` is one of 'cron', 'tz', 'every_ms',
 * 'phase_ms' (or 'dst_gap', 'dst_repeat', 'kind' for values the types rule
 * out but a decoder might still produce). The message is the rule broken;
 * callers prefix it with their own name for the field.
 */
export class CadenceError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'CadenceError';
  }
}

const SECOND = 1_000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

export const MAX_CRON_LENGTH = 256;
export const MIN_EVERY_MS = SECOND;
export const MAX_EVERY_MS = 366 * DAY;

/**
 * The most a transition moves the wall clock back (or forward, for the start
 * bound): real ones move it by 30 min to 2 h. Larger forward jumps (the 24 h
 * date-line moves) are gaps, which `resolveGap` handles at any size.
 */
const LOOK_AROUND_MS = 3 * HOUR;
/** Wall times examined by one nextOccurrence before giving up (a `skip` cron whose every match falls in gaps). */
const MAX_WALL_SCAN = 10_000;
/** …or once the wall clock is this far past the start: the Gregorian calendar repeats every 400 years. */
const MAX_SCAN_SPAN_MS = 401 * 366 * DAY;

// ---------------------------------------------------------------- validation

/** Checks a cadence once, at Schedule time. Throws CadenceError naming the field. */
export function validateCadence(c: Cadence): void {
  switch (c.kind) {
    case 'cron':
      validateCron(c);
      return;
    case 'interval':
      validateInterval(c);
      return;
    default:
      throw new CadenceError('kind', `must be 'cron' or 'interval' (got ${JSON.stringify((c as { kind: unknown }).kind)})`);
  }
}

function validateCron(c: CronCadence): void {
  const expr = parseCron(c.expr); // a fresh copy: the shared ones stand where their windows end
  if (typeof c.tz !== 'string' || !IANAZone.isValidZone(c.tz)) {
    throw new CadenceError('tz', `must be an IANA time zone name such as "Europe/Paris" or "UTC" (got ${JSON.stringify(c.tz)})`);
  }
  if (c.dstGap !== 'shift' && c.dstGap !== 'skip') {
    throw new CadenceError('dst_gap', `must be 'shift' or 'skip' (got ${JSON.stringify(c.dstGap)})`);
  }
  if (c.dstRepeat !== 'once' && c.dstRepeat !== 'twice') {
    throw new CadenceError('dst_repeat', `must be 'once' or 'twice' (got ${JSON.stringify(c.dstRepeat)})`);
  }
  // cron-parser rejects most impossible day/month pairs itself, but only
  // iterating proves a match exists; find out now rather than at the first fire.
  try {
    expr.next();
  } catch {
    throw new CadenceError('cron', `never matches a date (got "${c.expr}")`);
  }
}

function validateInterval(c: IntervalCadence): void {
  if (!Number.isSafeInteger(c.everyMs) || c.everyMs < MIN_EVERY_MS || c.everyMs > MAX_EVERY_MS) {
    throw new CadenceError('every_ms', `must be an integer from ${MIN_EVERY_MS} to ${MAX_EVERY_MS} (366 days) (got ${c.everyMs})`);
  }
  if (!Number.isSafeInteger(c.phaseMs) || c.phaseMs < 0 || c.phaseMs >= c.everyMs) {
    throw new CadenceError('phase_ms', `must be an integer with 0 <= phase_ms < every_ms = ${c.everyMs} (got ${c.phaseMs})`);
  }
}

// --------------------------------------------------------------- occurrences

/** The smallest occurrence instant (epoch ms) strictly after `afterMs`, or null if none (e.g. cron with no future match). */
export function nextOccurrence(c: Cadence, afterMs: number): number | null {
  return c.kind === 'interval' ? nextInterval(c, afterMs) : nextCron(c, afterMs);
}

/** Occurrences in (fromExclusiveMs, toInclusiveMs], ascending, at most `cap` of them. */
export function occurrencesBetween(c: Cadence, fromExclusiveMs: number, toInclusiveMs: number, cap: number): number[] {
  const out: number[] = [];
  let t = fromExclusiveMs;
  while (out.length < cap) {
    const next = nextOccurrence(c, t);
    if (next === null || next > toInclusiveMs) break;
    out.push(next);
    t = next;
  }
  return out;
}

function nextInterval(c: IntervalCadence, afterMs: number): number {
  // k is the index of the last occurrence at or before afterMs; floor (not
  // truncation) keeps this right before the phase and before 1970.
  const k = Math.floor((afterMs - c.phaseMs) / c.everyMs);
  return c.phaseMs + (k + 1) * c.everyMs;
}

/**
 * Walks cron matches in wall-clock order and keeps the smallest instant after
 * `afterMs`. Wall order is instant order except under `twice`, where the
 * second pass of a repeated hour comes later in time than wall times just
 * after the first pass — hence a search window rather than "first match wins".
 *
 * The window is tight so that a dense cron (every second, every minute) stays
 * cheap:
 * - start: an instant t > afterMs shows wall time t + offset(t) > afterMs +
 *   (lowest offset near afterMs), so no earlier wall time can matter (a gap's
 *   wall times are at least its transition + the offset before it);
 * - stop: once `best` is known, a later wall time w only yields instants
 *   w − offset ≥ w − (highest offset just before best), so the walk ends when
 *   that is ≥ best. Away from transitions both bounds collapse to the one
 *   offset, and the walk reads one match.
 */
function nextCron(c: CronCadence, afterMs: number): number | null {
  const matches = cronMatches(c.expr);
  const zone = zoneOffsets(c.tz);
  const startWall = afterMs + Math.min(zone.at(afterMs), zone.at(afterMs + LOOK_AROUND_MS));
  const gap: GapMemo = { fromWall: NaN, toWall: NaN, at: NaN };
  let best: number | null = null;
  let stopWall = startWall + MAX_SCAN_SPAN_MS;
  let wall: number | null = startWall;
  for (let i = 0; i < MAX_WALL_SCAN; i++) {
    wall = matches.after(wall);
    if (wall === null || wall >= stopWall) break;
    const instants = instantsOf(zone, wall, c, gap);
    for (const t of instants) {
      if (t > afterMs && (best === null || t < best)) {
        best = t;
        stopWall = best + Math.max(zone.at(best - LOOK_AROUND_MS), zone.at(best));
      }
    }
    // A skipped wall time in a gap: its later matches in the gap are skipped too. Step over
    // them at once: read one by one, an every-second cron's hour-long gap cost 3,600 reads.
    if (instants.length === 0 && wall >= gap.fromWall && wall < gap.toWall) wall = gap.toWall - 1;
    if (wall >= stopWall) break; // later matches are later still: no need to read one
  }
  return best;
}

// ------------------------------------------------------ wall time → instants

/** The last gap resolved in this walk: wall times in [fromWall, toWall) shift to `at`. */
interface GapMemo {
  fromWall: number;
  toWall: number;
  at: number;
}

/**
 * The instants (ascending) at which wall time `wall` fires under the policy.
 *
 * A candidate offset o is right for `wall` when the instant wall − o really
 * has offset o. Candidates are the zone's offsets a day either side of the
 * wall time (and at it), which covers any one transition: none valid is a
 * gap, two valid is a repeat.
 */
function instantsOf(zone: ZoneOffsets, wall: number, c: CronCadence, gap: GapMemo): number[] {
  const before = zone.at(wall - DAY);
  const after = zone.at(wall + DAY);
  if (before === after && zone.at(wall - before) === before) return [wall - before]; // no transition near: the usual case

  const valid: number[] = [];
  for (const o of new Set([before, after, zone.at(wall)])) {
    const t = wall - o;
    if (zone.at(t) === o && !valid.includes(t)) valid.push(t);
  }
  valid.sort((a, b) => a - b);
  if (valid.length > 0) return c.dstRepeat === 'twice' ? valid : [valid[0]];

  if (!(wall >= gap.fromWall && wall < gap.toWall)) resolveGap(zone, wall, Math.min(before, after), Math.max(before, after), gap);
  return c.dstGap === 'skip' ? [] : [gap.at]; // (skip: nextCron steps over the rest of the gap, which the memo now spans)
}

/**
 * The first instant after the gap containing `wall`: the smallest t whose wall
 * time t + offset(t) reaches `wall`. Between wall − high (wall time still
 * before the gap) and wall − low (already after it) the wall clock only jumps
 * forward, so a binary search on the millisecond finds the transition.
 */
function resolveGap(zone: ZoneOffsets, wall: number, low: number, high: number, gap: GapMemo): void {
  let lo = wall - high; // wall time < wall
  let hi = wall - low; // wall time ≥ wall
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mid + zone.at(mid) >= wall) hi = mid;
    else lo = mid;
  }
  gap.at = hi;
  gap.fromWall = hi + zone.at(hi - 1);
  gap.toWall = hi + zone.at(hi);
}

// ------------------------------------------------------- cron match series

/** Matches a window keeps; older ones are dropped from the front. */
const WINDOW_KEEP = 128;
/** Matches read past a window's end before jumping there instead. */
const WINDOW_EXTEND_MAX = 8;
/**
 * Windows per expression. The same instant is a different wall time in each
 * zone, so jobs sharing an expression walk one live edge per distinct offset
 * (UTC, Paris, New York, … ), plus the odd job far behind (catch-up, backfill).
 */
const WINDOWS_PER_EXPR = 8;

/**
 * The matches of one cron expression, as wall times encoded as UTC ms, read
 * from cron-parser once and shared by every job and every zone using the
 * expression: cron-parser takes 25–70 µs per match (luxon arithmetic), a
 * lookup here well under one.
 *
 * A query lands in a window that covers it, else extends the window ending
 * nearest below it, else opens a window (restarting the least recently used
 * one when all are open), so a job far from the others does not evict the
 * live edges. Memory: at most WINDOWS_PER_EXPR × WINDOW_KEEP numbers.
 */
class CronMatches {
  private readonly windows: MatchWindow[] = [];
  private clock = 0;

  constructor(private readonly text: string) {
    this.windows.push(new MatchWindow(parseCron(text)));
  }

  /** The first match strictly after wall time x, or null if there is none. */
  after(x: number): number | null {
    let below: MatchWindow | undefined;
    for (const w of this.windows) {
      if (w.covers(x)) return this.use(w).lookup(x);
      if (x >= w.from && (below === undefined || w.last() > below.last())) below = w;
    }
    if (below !== undefined && below.reach(x, below.readBudget(x))) return this.use(below).lookup(x);
    const fresh =
      this.windows.length < WINDOWS_PER_EXPR
        ? this.windows[this.windows.push(new MatchWindow(parseCron(this.text))) - 1]
        : this.windows.reduce((a, b) => (b.usedAt < a.usedAt ? b : a));
    fresh.restart(x);
    fresh.reach(x, Infinity); // one read: matches after floor(x) are after x
    return this.use(fresh).lookup(x);
  }

  private use(w: MatchWindow): MatchWindow {
    w.usedAt = ++this.clock;
    return w;
  }
}

/**
 * One contiguous run of matches. States: empty (from = NaN) → covering
 * (from, last], growing forward and dropping old matches from the front;
 * `restart` empties it at a new place.
 * Invariant: the matches in (from, walls[last]] are exactly `walls`, and the
 * iterator stands at walls[last] (at `from` while empty), so extending is one
 * `next()`. `ended`: cron-parser found nothing after that.
 */
class MatchWindow {
  from = NaN;
  usedAt = 0;
  private walls: number[] = [];
  private ended = false;

  constructor(private readonly expr: CronExpression) {}

  /** lookup(x) can answer without reading. */
  covers(x: number): boolean {
    return x >= this.from && (x < this.last() || this.ended);
  }

  last(): number {
    return this.walls.length > 0 ? this.walls[this.walls.length - 1] : this.from;
  }

  /**
   * Reads worth spending to reach x (x ≥ from) rather than restart there:
   * WINDOW_EXTEND_MAX if the spacing so far puts x that close to the end, 0
   * if not, and one try while the spacing is unknown.
   */
  readBudget(x: number): number {
    const n = this.walls.length;
    if (n < 2) return 1;
    const spacing = (this.walls[n - 1] - this.walls[0]) / (n - 1);
    return x - this.walls[n - 1] <= spacing * WINDOW_EXTEND_MAX ? WINDOW_EXTEND_MAX : 0;
  }

  /** Reads on until the window covers x (x ≥ from); false if that takes more than `maxReads`. */
  reach(x: number, maxReads: number): boolean {
    for (let read = 0; !this.covers(x); read++) {
      if (read >= maxReads) return false;
      this.extend();
    }
    return true;
  }

  /** The first match after x, for x the window covers. */
  lookup(x: number): number | null {
    const walls = this.walls;
    if (walls.length === 0 || walls[walls.length - 1] <= x) return null; // ended
    let lo = 0;
    let hi = walls.length - 1; // walls[hi] > x
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (walls[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return walls[lo];
  }

  restart(x: number): void {
    this.from = Math.floor(x); // matches are whole seconds: after floor(x) is after x
    this.walls = [];
    this.ended = false;
    this.expr.reset(new Date(this.from));
  }

  private extend(): void {
    try {
      this.walls.push(this.expr.next().getTime());
    } catch {
      this.ended = true; // cron-parser's loop limit: no further match at all
      return;
    }
    if (this.walls.length > WINDOW_KEEP) {
      const drop = this.walls.length - WINDOW_KEEP / 2;
      this.from = this.walls[drop - 1];
      this.walls = this.walls.slice(drop);
    }
  }
}

/** Distinct expressions kept; a daemon's jobs share few, so misses are rare. */
const CRON_CACHE_SIZE = 1_024;
const matchesCache = new Map<string, CronMatches>();

/** The shared matches of `text`. Throws CadenceError('cron', …) for text validateCadence refuses. */
function cronMatches(text: string): CronMatches {
  const hit = matchesCache.get(text);
  if (hit !== undefined) {
    matchesCache.delete(text); // re-insert: Map order is recency order
    matchesCache.set(text, hit);
    return hit;
  }
  const matches = new CronMatches(text);
  if (matchesCache.size >= CRON_CACHE_SIZE) matchesCache.delete(matchesCache.keys().next().value as string);
  matchesCache.set(text, matches);
  return matches;
}

/**
 * cron-parser's expression iterating in UTC over wall times, from 1970.
 * Throws CadenceError('cron', …) when cron-parser refuses the text or it has
 * other than 5 or 6 fields (cron-parser would fill in missing ones).
 */
function parseCron(text: string): CronExpression {
  if (typeof text !== 'string' || text.trim() === '') throw new CadenceError('cron', 'is required');
  if (text.length > MAX_CRON_LENGTH) throw new CadenceError('cron', `must be at most ${MAX_CRON_LENGTH} characters (got ${text.length})`);
  const trimmed = text.trim();
  // Counting words is not parsing fields: it only stops cron-parser from
  // reading "* * *" as "0 * * * * *". A lone "@…" word is a macro and is left
  // to cron-parser to recognise.
  const words = trimmed.split(/\s+/).length;
  const macro = words === 1 && trimmed.startsWith('@');
  if (!macro && words !== 5 && words !== 6) {
    throw new CadenceError('cron', `must have 5 fields, or 6 with seconds first, or be a macro such as @hourly (got ${words} in "${text}")`);
  }
  try {
    // hashSeed: `H` must pick the same value in every process and after every
    // restart, or a job would fire at different minutes on different owners.
    return CronExpressionParser.parse(trimmed, { tz: 'UTC', hashSeed: trimmed, currentDate: 0 });
  } catch (err) {
    const why = macro ? 'is not a known macro (@yearly, @monthly, @weekly, @daily, @hourly, …)' : 'is not a valid cron expression';
    throw new CadenceError('cron', `${why}: ${(err as Error).message} (got "${text}")`);
  }
}

// ------------------------------------------------------------- zone offsets

/** Span between two samples with equal offsets that proves no transition lies between them. */
const SAME_OFFSET_SPAN_MS = DAY;

/**
 * A zone's UTC offset (ms) at an instant, remembering the last two spans
 * known to have one offset, since each Intl round trip costs µs and a walk
 * asks about the same few days many times.
 *
 * Assumption (shared with `instantsOf`'s candidates): a zone changes offset
 * at most once in any two days. Then two samples at most a day apart with
 * the same offset have no transition between them, and a span grows sample
 * by sample. Two spans, so that the days either side of a transition both
 * stay remembered.
 */
class ZoneOffsets {
  private spans: { lo: number; hi: number; offset: number }[] = [];

  constructor(private readonly zone: Zone) {}

  at(t: number): number {
    if (this.zone.isUniversal) return Math.round(this.zone.offset(t) * MINUTE);
    for (const s of this.spans) if (t >= s.lo && t <= s.hi) return s.offset;
    // luxon gives minutes, fractional for old local-mean-time offsets.
    const offset = Math.round(this.zone.offset(t) * MINUTE);
    const near = this.spans.find((s) => s.offset === offset && t >= s.lo - SAME_OFFSET_SPAN_MS && t <= s.hi + SAME_OFFSET_SPAN_MS);
    if (near !== undefined) {
      near.lo = Math.min(near.lo, t);
      near.hi = Math.max(near.hi, t);
    } else {
      this.spans.unshift({ lo: t, hi: t, offset });
      if (this.spans.length > 2) this.spans.pop();
    }
    return offset;
  }
}

/** Zone names kept; bounded because Intl accepts any capitalisation of a name. */
const ZONE_CACHE_SIZE = 1_024;
const zoneCache = new Map<string, ZoneOffsets>();

/** Callers validated `tz`; an invalid one would give NaN offsets and no occurrences. */
function zoneOffsets(tz: string): ZoneOffsets {
  let zone = zoneCache.get(tz);
  if (zone === undefined) {
    if (zoneCache.size >= ZONE_CACHE_SIZE) zoneCache.clear(); // rare enough not to need recency
    // UTC needs no Intl round trip per offset.
    zone = new ZoneOffsets(tz === 'UTC' || tz === 'Etc/UTC' ? FixedOffsetZone.utcInstance : IANAZone.create(tz));
    zoneCache.set(tz, zone);
  }
  return zone;
}

// -------------------------------------------------------------------- jitter

/** Deterministic jitter in [0, maxJitterMs] from (jobId, nominalMs), so re-materialising the same occurrence gives the same due time. 0 when maxJitterMs is 0. */
export function jitterMs(jobId: string, nominalMs: number, maxJitterMs: number): number {
  if (!(maxJitterMs >= 1)) return 0;
  const choices = Math.floor(maxJitterMs) + 1;
  const unit = hash53(`${jobId}\u0000${nominalMs}`) / 2 ** 53; // in [0, 1)
  // min(): (1 − 2^-53) · choices can round up to choices itself.
  return Math.min(choices - 1, Math.floor(unit * choices));
}

/** cyrb53 (bryc, public domain): a fast 53-bit string hash, stable across engines. */
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
