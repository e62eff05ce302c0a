/**
 * The overview's problem indicators, from numbers the API and this member's
 * metrics give: shards without an owner, runs overdue, fire lag rising, dead
 * letters, clock skew. Pure: thresholds here, inputs gathered by api-read.ts.
 */
export type Severity = 'warn' | 'error';
export type ProblemKind = 'unowned_shards' | 'overdue' | 'rising_lag' | 'dead_letters' | 'clock_skew';

export interface Problem {
  kind: ProblemKind;
  severity: Severity;
  message: string;
}

/** A shard's oldest scheduled run overdue by more than this: the shard is not firing. */
export const OVERDUE_PROBLEM_MS = 1_000;
/** |Postgres clock − ours| above this. */
export const SKEW_PROBLEM_MS = 100;
/** Lag p99 below this is never "rising": sub-25 ms noise on a busy machine is not a problem. */
export const RISING_LAG_FLOOR_MS = 25;
/** How recent "recent" is for rising lag, and how far back "before" reaches. */
export const RECENT_LAG_MS = 30_000;
export const BEFORE_LAG_MS = 5 * 60_000;

export interface ProblemInput {
  unownedShards: number;
  /** Largest `lagMs` of any shard (now − its oldest scheduled due time, when past). */
  maxOverdueMs: number;
  deadLetters: { count: number; capped: boolean };
  clockSkewMs: number;
  /** Fire lag p99 over the last RECENT_LAG_MS, and over the BEFORE_LAG_MS before that; null when nothing fired. */
  lagP99RecentMs: number | null;
  lagP99BeforeMs: number | null;
}

/** Rising: the recent p99 is above the floor and more than twice what it was before (or nothing fired before). */
export function isLagRising(recentMs: number | null, beforeMs: number | null): boolean {
  if (recentMs === null || recentMs < RISING_LAG_FLOOR_MS) return false;
  return beforeMs === null || recentMs > 2 * Math.max(beforeMs, RISING_LAG_FLOOR_MS / 2);
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function detectProblems(p: ProblemInput): Problem[] {
  const out: Problem[] = [];
  if (p.unownedShards > 0) out.push({ kind: 'unowned_shards', severity: 'error', message: `${plural(p.unownedShards, 'shard')} without an owner: their runs do not fire` });
  if (p.maxOverdueMs > OVERDUE_PROBLEM_MS) out.push({ kind: 'overdue', severity: 'error', message: `runs overdue by up to ${Math.round(p.maxOverdueMs)} ms` });
  if (isLagRising(p.lagP99RecentMs, p.lagP99BeforeMs)) {
    const before = p.lagP99BeforeMs === null ? '' : ` (${p.lagP99BeforeMs.toFixed(1)} ms in the minutes before)`;
    out.push({ kind: 'rising_lag', severity: 'warn', message: `fire lag p99 rising: ${(p.lagP99RecentMs ?? 0).toFixed(1)} ms in the last 30 s${before}` });
  }
  if (p.deadLetters.count > 0) out.push({ kind: 'dead_letters', severity: 'warn', message: `${p.deadLetters.count}${p.deadLetters.capped ? '+' : ''} dead letter${p.deadLetters.count === 1 ? '' : 's'}` });
  if (Math.abs(p.clockSkewMs) > SKEW_PROBLEM_MS) out.push({ kind: 'clock_skew', severity: 'warn', message: `clock skew with Postgres: ${Math.round(p.clockSkewMs)} ms` });
  return out;
}
