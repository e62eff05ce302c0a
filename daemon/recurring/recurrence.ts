/**
 * A recurring job's rule, as stored in `jobs.recurrence` (jsonb), and the
 * plan that turns its next occurrences into runs. Pure: no I/O, so the
 * catch-up and limit rules are tested without a database.
 *
 * A job's progress is two values in its row: `next_fire_at` (nominal time of
 * the next occurrence not yet made a run; null once the rule has ended) and
 * `occurrences` (made so far, for the limit). A plan starts from them and
 * returns their next values, so applying it is one conditional update.
 *
 * Catch-up (an occurrence found already overdue: nothing could make it in
 * time — all daemons down, shard unowned, job resumed with catch-up):
 * overdue by at most the catch-up window ⇒ it fires now (fire_all: the latest
 * `maxRuns` of them; fire_once: only the latest); everything else overdue is
 * missed: counted, and recorded as a 'missed' run up to MISSED_ROWS_PER_PASS.
 * An interval rule's overdue occurrences are counted arithmetically; a cron
 * rule's are walked, WALK_BUDGET a pass, the rest in the next passes.
 */
import { nextOccurrence, jitterMs, type Cadence } from './cadence.js';

export type OverlapPolicy = 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other' | 'allow_all';
export type CatchUpMode = 'fire_all' | 'fire_once';

export interface Recurrence {
  cadence: Cadence;
  /** No occurrence before / after (inclusive), epoch ms. */
  startAtMs: number | null;
  endAtMs: number | null;
  jitterMs: number;
  /** Most occurrences ever made into runs. */
  limit: number | null;
  overlap: OverlapPolicy;
  catchUp: { windowMs: number; mode: CatchUpMode; maxRuns: number };
  pauseOnFailure: boolean;
}

export const DEFAULT_CATCH_UP = { windowMs: 300_000, mode: 'fire_all', maxRuns: 100 } as const;

/** A job as the planner needs it. */
export interface RecurringJobState {
  id: string;
  recurrence: Recurrence;
  /** Nominal ms of the next occurrence not made yet; null: ended. */
  nextFireAtMs: number | null;
  occurrences: number;
  /**
   * Nominal times from nextFireAtMs on that already have a run: after a
   * pause or an update moved the cursor back (a jittered later occurrence
   * had fired first), or a backfill ran them. They are neither made again
   * nor counted again (toward the limit, or as missed). Absent: none.
   */
  existing?: ReadonlySet<number>;
}

export interface PlannedRun {
  nominalMs: number;
  /** nominal + jitter. */
  dueMs: number;
  status: 'scheduled' | 'missed';
}

export interface Plan {
  runs: PlannedRun[];
  nextFireAtMs: number | null;
  /** Occurrences made into scheduled runs (counts toward the limit). */
  made: number;
  /** Occurrences missed (rows or not). */
  missed: number;
}

/**
 * An occurrence first seen (made) this late was missed by the cluster: its
 * catch-up rule applies. Less late, it is on time. The same for every maker:
 * the materialiser, and a resume with catch-up.
 */
export const OCCURRENCE_LATE_AFTER_MS = 1_000;

/** Missed occurrences recorded as rows per pass and job; the rest are only counted. */
export const MISSED_ROWS_PER_PASS = 100;
/** Most runs one pass makes for one job: a pass stays small, the next continues. */
export const MAX_RUNS_PER_PASS = 1_000;
/** Overdue cron occurrences walked per pass and job (an interval rule is counted, not walked). */
const WALK_BUDGET = 2_000;

/** A new job's first occurrence: the first at or after its start and after `nowMs` (a new job has nothing to catch up). */
export function firstOccurrence(r: Recurrence, nowMs: number): number | null {
  const from = r.startAtMs !== null ? Math.max(r.startAtMs - 1, nowMs - 1) : nowMs - 1;
  return within(r, nextOccurrence(r.cadence, from));
}

/** `t` if the rule still allows it (end), else null. */
function within(r: Recurrence, t: number | null): number | null {
  if (t === null) return null;
  if (r.endAtMs !== null && t > r.endAtMs) return null;
  return t;
}

/**
 * Occurrences due by `horizonMs`, from the job's next one. Overdue ones (before
 * `nowMs` − `toleranceMs`) follow the catch-up rule; the others are scheduled.
 */
export function planOccurrences(job: RecurringJobState, nowMs: number, horizonMs: number, toleranceMs = 0): Plan {
  const r = job.recurrence;
  const plan: Plan = { runs: [], nextFireAtMs: job.nextFireAtMs, made: 0, missed: 0 };
  const limitLeft = (): number => (r.limit === null ? Infinity : r.limit - job.occurrences - plan.made);
  const exists = (nominalMs: number): boolean => job.existing?.has(nominalMs) ?? false;
  const schedule = (nominalMs: number): void => {
    if (exists(nominalMs)) return;
    plan.runs.push({ nominalMs, dueMs: nominalMs + jitterMs(job.id, nominalMs, r.jitterMs), status: 'scheduled' });
    plan.made++;
  };
  let t = within(r, job.nextFireAtMs);

  // 1. Overdue: older than the catch-up window ⇒ missed; inside it ⇒ candidates.
  const lateBefore = nowMs - toleranceMs;
  if (t !== null && t < lateBefore) {
    const windowStart = nowMs - r.catchUp.windowMs;
    const keep = r.catchUp.mode === 'fire_once' ? 1 : r.catchUp.maxRuns;
    const miss = (nominalMs: number): void => {
      if (exists(nominalMs)) return;
      if (plan.missed < MISSED_ROWS_PER_PASS) plan.runs.push({ nominalMs, dueMs: nominalMs, status: 'missed' });
      plan.missed++;
    };
    const c = r.cadence;
    if (c.kind === 'interval') {
      // Arithmetic, however long the outage: occurrences are t, t + every, …
      const last = (before: number): number => (r.endAtMs !== null ? Math.min(before - 1, r.endAtMs) : before - 1);
      const count = (from: number, before: number): number => (last(before) < from ? 0 : Math.floor((last(before) - from) / c.everyMs) + 1);
      const old = count(t, windowStart);
      for (let k = 0; k < Math.min(old, MISSED_ROWS_PER_PASS); k++) miss(t + k * c.everyMs);
      plan.missed += Math.max(0, old - MISSED_ROWS_PER_PASS);
      t = within(r, t + old * c.everyMs);
      const recent = t === null ? 0 : count(t, lateBefore);
      const fire = Math.min(keep, recent, Math.max(0, limitLeft()));
      for (let k = 0; k < recent - fire; k++) miss(t! + k * c.everyMs);
      for (let k = recent - fire; k < recent; k++) schedule(t! + k * c.everyMs);
      if (t !== null) t = within(r, t + recent * c.everyMs);
    } else {
      // A cron rule is walked, at most WALK_BUDGET occurrences a pass: a long
      // outage is caught up over several passes (next_fire_at records where),
      // never in one that stalls the event loop.
      let walked = 0;
      while (t !== null && t < windowStart) {
        if (walked++ >= WALK_BUDGET) return { ...plan, nextFireAtMs: t };
        miss(t);
        t = within(r, nextOccurrence(c, t));
      }
      const candidates: number[] = [];
      const budget = Math.max(WALK_BUDGET, 2 * keep);
      while (t !== null && t < lateBefore) {
        if (candidates.length >= budget) {
          // More overdue than a pass walks: the oldest cannot be among the `keep` latest.
          for (const m of candidates) miss(m);
          return { ...plan, nextFireAtMs: t };
        }
        candidates.push(t);
        t = within(r, nextOccurrence(c, t));
      }
      const fire = Math.min(keep, candidates.length, Math.max(0, limitLeft()));
      for (let k = 0; k < candidates.length - fire; k++) miss(candidates[k]);
      for (const m of candidates.slice(candidates.length - fire)) schedule(m);
    }
  }

  // 2. On time: everything due by the horizon, within the limit.
  while (t !== null && t <= horizonMs && plan.made < MAX_RUNS_PER_PASS) {
    if (limitLeft() <= 0) {
      t = null;
      break;
    }
    schedule(t);
    t = within(r, nextOccurrence(r.cadence, t));
  }
  if (limitLeft() <= 0) t = null;
  plan.nextFireAtMs = t;
  return plan;
}

/** The next `n` nominal times from `fromMs` (inclusive), by the rule alone. */
export function upcoming(r: Recurrence, fromMs: number | null, n: number): number[] {
  const out: number[] = [];
  let t = within(r, fromMs);
  while (t !== null && out.length < n) {
    out.push(t);
    t = within(r, nextOccurrence(r.cadence, t));
  }
  return out;
}

/**
 * A rule as read back from `jobs.recurrence` (written by JSON.stringify of a
 * validated Recurrence). Checks the shape, so a hand-edited row fails loudly
 * for its job instead of planning garbage.
 */
export function storedRecurrence(v: unknown): Recurrence {
  const r = v as Partial<Recurrence> | null;
  const c = r?.cadence;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    c !== undefined &&
    ((c.kind === 'cron' && typeof c.expr === 'string' && typeof c.tz === 'string') ||
      (c.kind === 'interval' && Number.isSafeInteger(c.everyMs) && Number.isSafeInteger(c.phaseMs))) &&
    typeof r.jitterMs === 'number' &&
    typeof r.overlap === 'string' &&
    typeof r.catchUp === 'object';
  if (!ok) throw new Error(`jobs.recurrence: not a recurrence this daemon wrote: ${JSON.stringify(v)?.slice(0, 200)}`);
  return r as Recurrence;
}
