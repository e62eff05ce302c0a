/**
 * Dead letters: runs that failed with no retry left or not retryable. Listed
 * newest death first; replayed as new runs (one per dead run, ever), routed
 * like every committed run.
 */
import type { Db } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import type { RunRow } from '../db/queries/columns.js';
import { ATTEMPTS_OF, LIST_DEAD_RUNS, REPLAY_RUNS } from '../db/queries/jobs.js';
import type { RunRouter } from '../engine/router.js';
import { plainArray } from './pg-arrays.js';

export interface DeadRunsFilter {
  queue: string | null;
  jobId: string | null;
  sinceMs: number | null;
  untilMs: number | null;
  /** Case-insensitive substring of the error. */
  errorContains: string | null;
  /** Keyset of the previous page's last run. */
  after: { finishedAtMs: number; id: number } | null;
  limit: number;
  /** Only runs of this namespace's jobs (a namespaced caller); null: every namespace. */
  namespace?: string | null;
}

/** An ILIKE pattern matching `text` literally anywhere. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listDeadRuns(db: Db, f: DeadRunsFilter): Promise<RunRow[]> {
  const { rows } = await query<RunRow>(db, LIST_DEAD_RUNS, [
    f.queue,
    f.jobId,
    f.sinceMs,
    f.untilMs,
    f.errorContains === null ? null : containsPattern(f.errorContains),
    f.after?.finishedAtMs ?? null,
    f.after?.id ?? null,
    f.limit,
    f.namespace ?? null,
  ]);
  return rows;
}

/** Every attempt of the run's occurrence, oldest first. */
export async function attemptsOf(db: Db, run: RunRow): Promise<RunRow[]> {
  const { rows } = await query<RunRow>(db, ATTEMPTS_OF, [run.job_id, run.idempotency_key]);
  return rows;
}

export interface Replayed {
  deadRunId: number;
  newRunId: number;
}

/** Replays dead runs; those not dead, or replayed before, are returned as skipped. */
export async function replayRuns(db: Db, router: RunRouter, ids: readonly number[]): Promise<{ replayed: Replayed[]; skipped: number[] }> {
  let afterCommit: (() => void) | undefined;
  const rows = await transaction(db, async (tx) => {
    const { rows: made } = await query<{ id: number; shard: number; priority: number; replay_of: number; due_at_ms: number }>(tx, REPLAY_RUNS, [plainArray(ids)]);
    afterCommit = await router.inTransaction(tx, made.map((r) => ({ runId: r.id, shard: r.shard, priority: r.priority, dueAtMs: r.due_at_ms })));
    return made;
  });
  afterCommit?.();
  const done = new Set(rows.map((r) => r.replay_of));
  return { replayed: rows.map((r) => ({ deadRunId: r.replay_of, newRunId: r.id })), skipped: ids.filter((id) => !done.has(id)) };
}
