/**
 * Writes runs for occurrences of recurring jobs (and triggers, backfills):
 * one INSERT for all of them, in the caller's transaction. The unique key
 * (job, nominal time) answers any race — a retry of the same pass, a zombie
 * owner, a verb racing the materialiser: an occurrence already made is simply
 * not returned. Only what was written goes to the router.
 */
import type { Queryable } from '../db/pool.js';
import { query } from '../db/pool.js';
import type { RunOrigin } from '../db/queries/columns.js';
import { INSERT_OCCURRENCES, type OccurrenceRow } from '../db/queries/recurring.js';
import { plainArray, textArray } from '../scheduling/pg-arrays.js';
import type { RunRef } from '../run-ref.js';

export interface OccurrenceToMake {
  jobId: string;
  shard: number;
  /** Null: not an occurrence of the rule (a trigger). */
  nominalMs: number | null;
  dueMs: number;
  status: 'scheduled' | 'missed' | 'buffered';
}

export async function makeOccurrences(tx: Queryable, runs: readonly OccurrenceToMake[], origin: RunOrigin): Promise<OccurrenceRow[]> {
  if (runs.length === 0) return [];
  const { rows } = await query<OccurrenceRow>(tx, INSERT_OCCURRENCES, [
    plainArray(runs.map((r) => r.jobId)),
    plainArray(runs.map((r) => r.shard)),
    textArray(runs.map((r) => (r.nominalMs === null ? null : String(r.nominalMs)))),
    plainArray(runs.map((r) => r.dueMs)),
    textArray(runs.map((r) => r.status)),
    origin,
  ]);
  return rows;
}

/**
 * Missed occurrences actually recorded, per job: a planned missed row whose
 * occurrence has a run already (a backfill made it) is not written (ON
 * CONFLICT), and was not missed.
 */
export function missedWritten(rows: readonly OccurrenceRow[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.status === 'missed') out.set(r.job_id, (out.get(r.job_id) ?? 0) + 1);
  return out;
}

/** The written runs that will fire (scheduled), as the router takes them. */
export function firingRefs(rows: readonly OccurrenceRow[]): RunRef[] {
  return rows.filter((r) => r.status === 'scheduled').map((r) => ({ runId: r.id, shard: r.shard, dueAtMs: r.due_at_ms, priority: r.priority }));
}
