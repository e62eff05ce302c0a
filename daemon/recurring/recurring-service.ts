/**
 * Recurring jobs behind the Scheduler API: create them, and the operator's
 * verbs — pause, resume, update, trigger, backfill — plus what GetJob and
 * ListJobs show of them. Each verb is one transaction holding the job's row
 * lock; the state change in it is one conditional statement (queries/recurring.ts).
 *
 * Occurrences a verb makes (a new job's first ones, a trigger, a backfill,
 * an update's re-made ones) are written by the verb itself, up to the window
 * horizon, and go through the router like every committed run: the shard's
 * owner need not be asked, since the unique key (job, nominal time) makes a
 * race with its materialiser harmless. Beyond the horizon the owner's
 * materialiser (materialiser.ts) takes over.
 */
import type { Db, Queryable } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import type { JobKind, JobRow, JobStatus, RunRow } from '../db/queries/columns.js';
import {
  ADVANCE_JOBS,
  EXISTING_OCCURRENCES,
  INSERT_RECURRING_JOBS,
  JOB_COUNTS,
  LATEST_RUNS,
  LIST_JOBS,
  LOCK_JOB,
  PAUSE_JOB,
  REPRIORITISE_RUNS,
  RESUME_JOB,
  UPCOMING_RUNS,
  UPDATE_JOB,
  WITHDRAW_OCCURRENCES,
  type JobCountsRow,
} from '../db/queries/recurring.js';
import { SELECT_DEDUPE_REFS, SELECT_JOB, SELECT_RUN } from '../db/queries/jobs.js';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { shardOf } from '../shard-of.js';
import { newIds } from '../ids.js';
import type { RunRouter } from '../engine/router.js';
import type { ScheduleInput, ScheduledJob } from '../scheduling/types.js';
import { plainArray, textArray } from '../scheduling/pg-arrays.js';
import { jitterMs, occurrencesBetween } from './cadence.js';
import { firingRefs, makeOccurrences, missedWritten, type OccurrenceToMake } from './occurrences.js';
import { OCCURRENCE_LATE_AFTER_MS, firstOccurrence, planOccurrences, storedRecurrence, upcoming, type Recurrence } from './recurrence.js';

export interface RecurringDeps {
  db: Db;
  shardCount: number;
  router: RunRouter;
  wallNow: () => number;
  /** A run was withdrawn or cancelled: drop it from memory if it is ours. */
  forgetRun: (runId: number) => void;
}

/** A schedule request with its validated rule. */
export interface RecurringInput extends ScheduleInput {
  recurrence: Recurrence;
}

export interface JobDetail {
  job: JobRow;
  runs: RunRow[];
  nextFireTimesMs: number[];
  counts: JobCountsRow & { missed: number };
}

export interface JobUpdate {
  recurrence: Recurrence | null;
  payload: Buffer | null;
  priority: number | null;
  retry: { maxAttempts: number; initialBackoffMs: number; maxBackoffMs: number } | null;
  leaseMs: number | null;
}

export interface ListJobsFilter {
  queue: string | null;
  kind: JobKind | null;
  status: JobStatus | null;
  namespace: string | null;
  afterId: string | null;
  limit: number;
}

const BACKFILL_DEFAULT_MAX = 1_000;

export class RecurringService {
  constructor(private readonly deps: RecurringDeps) {}

  /**
   * Creates recurring jobs, all or none, with their occurrences due within
   * the window. A request whose dedupe key exists answers with that job.
   */
  async schedule(inputs: readonly RecurringInput[]): Promise<ScheduledJob[]> {
    const now = this.deps.wallNow();
    const horizon = this.deps.router.horizon();
    const ids = newIds(inputs.length);
    const shards = ids.map((id) => shardOf(id, this.deps.shardCount));
    const plans = inputs.map((i, k) =>
      planOccurrences({ id: ids[k], recurrence: i.recurrence, nextFireAtMs: firstOccurrence(i.recurrence, now), occurrences: 0 }, now, horizon),
    );
    let afterCommit: (() => void) | undefined;
    const out = await transaction(this.deps.db, async (tx) => {
      const { rows } = await query<{ id: string }>(tx, INSERT_RECURRING_JOBS, [
        ids,
        inputs.map((i) => i.namespace),
        inputs.map((i) => i.queue),
        shards,
        inputs.map((i) => i.payload),
        inputs.map((i) => i.priority),
        inputs.map((i) => i.dedupeKey),
        inputs.map((i) => i.delivery),
        inputs.map((i) => i.maxAttempts),
        inputs.map((i) => i.initialBackoffMs),
        inputs.map((i) => i.maxBackoffMs),
        inputs.map((i) => i.leaseMs),
        inputs.map((i) => i.recurrence.cadence.kind),
        inputs.map((i) => JSON.stringify(i.recurrence)),
        inputs.map((i) => i.recurrence.overlap),
        plans.map((p) => p.nextFireAtMs),
        plans.map((p) => p.made),
      ]);
      const inserted = new Set(rows.map((r) => r.id));
      const toMake: OccurrenceToMake[] = [];
      inputs.forEach((_, k) => {
        if (!inserted.has(ids[k])) return;
        for (const run of plans[k].runs) toMake.push({ jobId: ids[k], shard: shards[k], nominalMs: run.nominalMs, dueMs: run.dueMs, status: run.status });
      });
      const made = await makeOccurrences(tx, toMake, 'schedule');
      afterCommit = await this.deps.router.inTransaction(tx, firingRefs(made));
      const firstRun = new Map<string, (typeof made)[number]>();
      for (const m of made) if (!firstRun.has(m.job_id)) firstRun.set(m.job_id, m);
      // Dense (not new Array(n)): answerDeduplicated finds the empty slots with flatMap, which skips holes.
      const scheduled = Array.from<ScheduledJob | undefined>({ length: inputs.length });
      inputs.forEach((i, k) => {
        if (!inserted.has(ids[k])) return;
        const r = firstRun.get(ids[k]);
        scheduled[k] = {
          job: { id: ids[k], shard: shards[k], delivery: i.delivery },
          run: r ? { id: r.id, job_id: ids[k], shard: r.shard, priority: r.priority, status: 'scheduled', due_at_ms: r.due_at_ms } : null,
          deduplicated: false,
        };
      });
      await this.answerDeduplicated(tx, inputs, scheduled);
      return scheduled as ScheduledJob[];
    });
    afterCommit?.();
    return out;
  }

  private async answerDeduplicated(tx: Queryable, inputs: readonly RecurringInput[], out: (ScheduledJob | undefined)[]): Promise<void> {
    const idx = out.flatMap((s, k) => (s === undefined ? [k] : []));
    if (idx.length === 0) return;
    const { rows } = await query<{ idx: number; job_id: string; shard: number; delivery: JobRow['delivery']; run_id: number | null; status: RunRow['status']; priority: number; due_at_ms: number }>(
      tx,
      SELECT_DEDUPE_REFS,
      [plainArray(idx), textArray(idx.map((k) => inputs[k].namespace)), textArray(idx.map((k) => inputs[k].dedupeKey))],
    );
    for (const r of rows) {
      out[r.idx] = {
        job: { id: r.job_id, shard: r.shard, delivery: r.delivery },
        run: r.run_id === null ? null : { id: r.run_id, job_id: r.job_id, shard: r.shard, priority: r.priority, status: r.status, due_at_ms: r.due_at_ms },
        deduplicated: true,
      };
    }
    const gap = out.findIndex((s) => s === undefined);
    if (gap >= 0) throw failedPrecondition(`requests[${gap}]: job vanished while deduplicating; retry`);
  }

  /** The job, its latest runs, its next fire times and its counts. */
  async detail(jobId: string, job: JobRow): Promise<JobDetail> {
    const [{ rows: latest }, { rows: counts }, { rows: upcomingRuns }] = await Promise.all([
      query<RunRow>(this.deps.db, LATEST_RUNS, [jobId, 10]),
      query<JobCountsRow>(this.deps.db, JOB_COUNTS, [jobId]),
      query<{ due_at_ms: number }>(this.deps.db, UPCOMING_RUNS, [jobId, 10]),
    ]);
    const next = upcomingRuns.map((r) => r.due_at_ms);
    if (job.status === 'active' && job.next_fire_at_ms !== null && next.length < 10) {
      const rule = storedRecurrence(job.recurrence);
      // Occurrences already made count toward the limit: only those it still allows are to come.
      const left = rule.limit === null ? 10 : Math.max(0, rule.limit - job.occurrences);
      for (const t of upcoming(rule, job.next_fire_at_ms, Math.min(10 - next.length, left))) next.push(t + jitterMs(job.id, t, rule.jitterMs));
    }
    return { job, runs: latest.reverse(), nextFireTimesMs: job.status === 'paused' ? [] : next, counts: { ...counts[0], missed: job.missed_count } };
  }

  async listJobs(f: ListJobsFilter): Promise<JobRow[]> {
    const { rows } = await query<JobRow>(this.deps.db, LIST_JOBS, [f.queue, f.kind, f.status, f.namespace, f.afterId, f.limit]);
    return rows;
  }

  /** Active recurring job → paused; occurrences made but not fired are taken back. */
  async pause(jobId: string, note: string): Promise<{ job: JobRow; withdrawn: number }> {
    const withdrawn = await this.inJob(jobId, async (tx, job) => {
      if (job.kind === 'once') throw failedPrecondition(`job ${jobId} is one-shot: only recurring jobs pause (CancelJob or RescheduleJob it)`);
      if (job.status !== 'active') throw failedPrecondition(`job ${jobId} is ${job.status}, not active`);
      await query(tx, PAUSE_JOB, [jobId, note]);
      return this.withdraw(tx, jobId, null);
    });
    this.forget(withdrawn);
    return { job: await this.job(jobId), withdrawn: withdrawn.length };
  }

  /** Paused → active: from the next occurrence after now, or (catchUp) from where it stopped, by its catch-up rule. */
  async resume(jobId: string, catchUp: boolean): Promise<JobRow> {
    let afterCommit: (() => void) | undefined;
    await this.inJob(jobId, async (tx, job) => {
      if (job.status !== 'paused') throw failedPrecondition(`job ${jobId} is ${job.status}, not paused`);
      const rule = storedRecurrence(job.recurrence);
      const now = this.deps.wallNow();
      await query(tx, RESUME_JOB, [jobId, catchUp ? null : firstOccurrence(rule, now), catchUp]);
      afterCommit = await this.makeDue(tx, jobId);
    });
    afterCommit?.();
    return this.job(jobId);
  }

  /**
   * New settings. A new rule re-makes the occurrences whose time is later
   * than now (those whose time has passed fire by the old rule, jitter or
   * not); a new priority applies to the runs waiting to fire.
   */
  async update(jobId: string, u: JobUpdate): Promise<JobRow> {
    let afterCommit: (() => void) | undefined;
    let withdrawn: number[] = [];
    await this.inJob(jobId, async (tx, job) => {
      if (job.status === 'cancelled' || job.status === 'dead') throw failedPrecondition(`job ${jobId} is ${job.status}`);
      if (u.recurrence && job.kind === 'once') throw invalidArgument('recurrence', `job ${jobId} is one-shot; schedule a recurring job instead`);
      if (u.recurrence && u.recurrence.cadence.kind !== job.kind) {
        throw invalidArgument('recurrence', `job ${jobId} is a ${job.kind} job; its cadence stays ${job.kind} (schedule a new job to change it)`);
      }
      if (u.recurrence && job.status === 'completed' && job.kind === 'once') throw failedPrecondition(`job ${jobId} is completed`);
      const remake = job.kind !== 'once' && u.recurrence !== null;
      // One instant for both: occurrences after it are re-made by the new rule, the rest stay (before, a
      // jittered occurrence whose time had passed but not its due time was withdrawn and made by neither).
      const now = Math.floor(this.deps.wallNow());
      if (remake) withdrawn = await this.withdraw(tx, jobId, now);
      const rule = u.recurrence ?? (job.kind !== 'once' ? storedRecurrence(job.recurrence) : null);
      const next = remake && rule ? firstOccurrence(rule, now) : null;
      const { rows: updated } = await query<{ id: string; status: JobRow['status'] }>(tx, UPDATE_JOB, [
        jobId,
        u.recurrence ? JSON.stringify(u.recurrence) : null,
        u.recurrence?.overlap ?? null,
        u.payload,
        u.priority,
        u.retry?.maxAttempts ?? null,
        u.retry?.initialBackoffMs ?? null,
        u.retry?.maxBackoffMs ?? null,
        next,
        u.leaseMs,
        remake,
      ]);
      if (updated.length !== 1) throw failedPrecondition(`job ${jobId} changed meanwhile; retry`);
      if (u.priority !== null) await query(tx, REPRIORITISE_RUNS, [jobId, u.priority]);
      // Its status after the update: a completed job that a new rule gives occurrences again is active now, and
      // its first ones are made here, as for an active job (else they waited for the materialiser, and fired late).
      if (remake && updated[0].status === 'active') afterCommit = await this.makeDue(tx, jobId);
    });
    this.forget(withdrawn);
    afterCommit?.();
    return this.job(jobId);
  }

  /** A run of a recurring job, due now, outside its rule (no nominal time). */
  async trigger(jobId: string, overrideOverlap: boolean): Promise<RunRow> {
    let afterCommit: (() => void) | undefined;
    const runId = await this.inJob(jobId, async (tx, job) => {
      if (job.kind === 'once') throw failedPrecondition(`job ${jobId} is one-shot: RescheduleJob it to fire it now`);
      if (job.status === 'cancelled' || job.status === 'dead') throw failedPrecondition(`job ${jobId} is ${job.status}`);
      const now = Math.floor(this.deps.wallNow());
      const made = await makeOccurrences(tx, [{ jobId, shard: job.shard, nominalMs: null, dueMs: now, status: 'scheduled' }], overrideOverlap ? 'trigger_forced' : 'trigger');
      afterCommit = await this.deps.router.inTransaction(tx, firingRefs(made));
      return made[0].id;
    });
    afterCommit?.();
    const { rows } = await query<RunRow>(this.deps.db, SELECT_RUN, [runId]);
    return rows[0];
  }

  /**
   * The rule's occurrences in (fromMs, toMs] (within its start and end), made
   * into runs that fire now in nominal order. With a buffering overlap policy they wait their turn
   * (buffered, one after another); otherwise they fire together.
   */
  async backfill(jobId: string, fromMs: number, toMs: number, maxRuns: number, dryRun = false): Promise<{ created: number; existed: number; occurrences: number }> {
    const max = maxRuns || BACKFILL_DEFAULT_MAX;
    const occurrencesOf = (job: JobRow): number[] => {
      if (job.kind === 'once') throw failedPrecondition(`job ${jobId} is one-shot: it has no occurrences to backfill`);
      if (job.status === 'cancelled' || job.status === 'dead') throw failedPrecondition(`job ${jobId} is ${job.status}`);
      // Only the rule's own occurrences: none before its start or after its end.
      const rule = storedRecurrence(job.recurrence);
      const from = rule.startAtMs !== null ? Math.max(fromMs, rule.startAtMs - 1) : fromMs;
      const to = rule.endAtMs !== null ? Math.min(toMs, rule.endAtMs) : toMs;
      const times = to > from ? occurrencesBetween(rule.cadence, from, to, max + 1) : [];
      if (times.length > max) throw invalidArgument('max_runs', `the range holds more than ${max} occurrences; narrow it or raise max_runs (at most 10000)`);
      return times;
    };
    // A dry run only counts (no lock: the rule's times do not depend on what was made).
    if (dryRun) return { created: 0, existed: 0, occurrences: occurrencesOf(await this.job(jobId)).length };
    let afterCommit: (() => void) | undefined;
    const out = await this.inJob(jobId, async (tx, job) => {
      const times = occurrencesOf(job);
      const rule = storedRecurrence(job.recurrence);
      const now = Math.floor(this.deps.wallNow());
      const buffered = rule.overlap === 'buffer_one' || rule.overlap === 'buffer_all';
      const made = await makeOccurrences(
        tx,
        times.map((t, k) => ({ jobId, shard: job.shard, nominalMs: t, dueMs: now + k, status: buffered ? 'buffered' : 'scheduled' })),
        'backfill',
      );
      afterCommit = await this.deps.router.inTransaction(tx, firingRefs(made));
      return { created: made.length, existed: times.length - made.length, occurrences: times.length };
    });
    afterCommit?.();
    return out;
  }

  private async job(jobId: string): Promise<JobRow> {
    const { rows } = await query<JobRow>(this.deps.db, SELECT_JOB, [jobId]);
    if (!rows[0]) throw notFound(`job ${jobId}`);
    return rows[0];
  }

  /** Runs `fn` in a transaction holding the job's row lock. */
  private inJob<T>(jobId: string, fn: (tx: Queryable, job: JobRow) => Promise<T>): Promise<T> {
    return transaction(this.deps.db, async (tx) => {
      const { rows } = await query<JobRow>(tx, LOCK_JOB, [jobId]);
      if (!rows[0]) throw notFound(`job ${jobId}`);
      return fn(tx, rows[0]);
    });
  }

  /** Withdraws the occurrences made but not fired: those after `afterMs`, or (null) all of them. */
  private async withdraw(tx: Queryable, jobId: string, afterMs: number | null): Promise<number[]> {
    const { rows } = await query<{ id: number; shard: number }>(tx, WITHDRAW_OCCURRENCES, [jobId, afterMs]);
    return rows.map((r) => r.id);
  }

  /** After commit: withdrawn runs leave memory (before it, a rollback would leave them out of it). */
  private forget(runIds: readonly number[]): void {
    for (const id of runIds) this.deps.forgetRun(id);
  }

  /** Makes the job's occurrences due within the window, in `tx` (after a resume or an update). */
  private async makeDue(tx: Queryable, jobId: string): Promise<() => void> {
    const { rows } = await query<JobRow>(tx, LOCK_JOB, [jobId]);
    const job = rows[0];
    if (!job || job.status !== 'active' || job.next_fire_at_ms === null) return () => undefined;
    // A resume with catch-up (or an update) may start before occurrences that have runs already: a jittered later
    // one fired before the earlier one the pause withdrew, or a backfill ran them.
    const { rows: had } = await query<{ nominal_ms: number }>(tx, EXISTING_OCCURRENCES, [jobId, job.next_fire_at_ms]);
    const plan = planOccurrences(
      { id: jobId, recurrence: storedRecurrence(job.recurrence), nextFireAtMs: job.next_fire_at_ms, occurrences: job.occurrences, existing: new Set(had.map((h) => h.nominal_ms)) },
      this.deps.wallNow(),
      this.deps.router.horizon(),
      // As the materialiser: only an occurrence more than this late follows the catch-up rule (a resume with catch-up).
      OCCURRENCE_LATE_AFTER_MS,
    );
    const made = await makeOccurrences(
      tx,
      plan.runs.map((r) => ({ jobId, shard: job.shard, nominalMs: r.nominalMs, dueMs: r.dueMs, status: r.status })),
      'schedule',
    );
    await query(tx, ADVANCE_JOBS, [[jobId], [job.shard], [job.next_fire_at_ms], [plan.nextFireAtMs], [plan.made], [missedWritten(made).get(jobId) ?? 0]]);
    return this.deps.router.inTransaction(tx, firingRefs(made));
  }
}
