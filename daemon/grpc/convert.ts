/** Row → wire conversions. Enum names follow the proto; int64 go out as strings. */
import type { FiredRunRow, JobRow, RunRow } from '../db/queries/columns.js';
import type { Job } from '../../proto/gen/timelane/v1/Job.js';
import type { Run } from '../../proto/gen/timelane/v1/Run.js';
import type { DeliveredRun } from '../../proto/gen/timelane/v1/DeliveredRun.js';
import type { ScheduledRef } from '../../proto/gen/timelane/v1/ScheduledRef.js';
import type { JobCounts } from '../../proto/gen/timelane/v1/JobCounts.js';
import type { JobCountsRow } from '../db/queries/recurring.js';
import type { ScheduleInput, ScheduledJob } from '../scheduling/types.js';
import { storedRecurrence } from '../recurring/recurrence.js';
import { recurrenceToWire } from './recurrence-input.js';

const JOB_STATUS = { active: 'JOB_ACTIVE', paused: 'JOB_PAUSED', completed: 'JOB_COMPLETED', dead: 'JOB_DEAD', cancelled: 'JOB_CANCELLED' } as const;
const JOB_KIND = { once: 'JOB_ONCE', cron: 'JOB_CRON', interval: 'JOB_INTERVAL' } as const;
const RUN_STATUS = {
  scheduled: 'RUN_SCHEDULED',
  fired: 'RUN_FIRED',
  completed: 'RUN_COMPLETED',
  failed: 'RUN_FAILED',
  dead: 'RUN_DEAD',
  cancelled: 'RUN_CANCELLED',
  skipped: 'RUN_SKIPPED',
  buffered: 'RUN_BUFFERED',
  missed: 'RUN_MISSED',
} as const;
const DELIVERY = { at_least_once: 'AT_LEAST_ONCE', at_most_once: 'AT_MOST_ONCE' } as const;

const i64 = (n: number | null | undefined): string => String(n ?? 0);
/**
 * An int64 as a number, for messages on the hot path: protobufjs turns a
 * decimal string into its int64 by Long.fromString (a multiply and an add of
 * Longs per 8 digits, ~10 objects), a number by one division.
 */
const i64n = (n: number | null | undefined): number => n ?? 0;

/**
 * When a job fires next: its earliest occurrence already made a run (the
 * materialiser makes them ahead, so the stored cursor is often later), else
 * the next one not made yet while the job is active; 0 when none.
 */
function nextFireOf(j: JobRow): number {
  const cursor = j.status === 'active' ? j.next_fire_at_ms : null;
  if (j.next_run_due_ms === null) return cursor ?? 0;
  return cursor === null ? j.next_run_due_ms : Math.min(j.next_run_due_ms, cursor);
}

export function jobToWire(j: JobRow): Job {
  return {
    id: j.id,
    namespace: j.namespace,
    queue: j.queue,
    payload: j.payload,
    priority: j.priority,
    dedupeKey: j.dedupe_key ?? '',
    delivery: DELIVERY[j.delivery],
    retry: { maxAttempts: j.max_attempts, initialBackoffMs: j.initial_backoff_ms, maxBackoffMs: j.max_backoff_ms },
    leaseMs: j.lease_ms,
    status: JOB_STATUS[j.status],
    shard: j.shard,
    createdAtMs: i64(j.created_at_ms),
    updatedAtMs: i64(j.updated_at_ms),
    kind: JOB_KIND[j.kind],
    recurrence: j.kind === 'once' ? null : recurrenceToWire(storedRecurrence(j.recurrence)),
    nextFireAtMs: i64(nextFireOf(j)),
    occurrences: j.occurrences,
    pauseNote: j.pause_note ?? '',
  };
}

export function runToWire(r: RunRow): Run {
  return {
    id: String(r.id),
    jobId: r.job_id,
    queue: r.queue,
    shard: r.shard,
    attempt: r.attempt,
    status: RUN_STATUS[r.status],
    dueAtMs: i64(r.due_at_ms),
    firedAtMs: i64(r.fired_at_ms),
    lagMs: r.lag_ms ?? 0,
    fence: i64(r.fence),
    deliveries: r.deliveries,
    idempotencyKey: r.idempotency_key,
    finishedAtMs: i64(r.finished_at_ms),
    error: r.error ?? '',
    leaseExpiresAtMs: i64(r.lease_expires_at_ms),
    claimedAtMs: i64(r.claimed_at_ms),
    nominalAtMs: i64(r.nominal_at_ms),
    origin: r.origin ?? '',
    workerId: r.worker_id ?? '',
    progress: r.progress ?? 0,
    replayOf: r.replay_of === null ? '' : String(r.replay_of),
    cancelRequestedAtMs: i64(r.cancel_requested_at_ms),
  };
}

/**
 * A run as released to a worker stream at `sentAtMs` (its fire time); a
 * staged one goes out ahead of that, to start at `startMonoMs` on this
 * process's monotonic clock (performance.now()). Its int64 go out as numbers (i64n).
 */
export function deliveredToWire(r: FiredRunRow, sentAtMs: number, startMonoMs = 0): DeliveredRun {
  return {
    runId: String(r.id),
    jobId: r.job_id,
    queue: r.queue,
    attempt: r.attempt,
    payload: r.payload,
    dueAtMs: i64n(r.due_at_ms),
    firedAtMs: Math.floor(sentAtMs),
    fence: i64n(r.fence),
    delivery: r.deliveries,
    idempotencyKey: r.idempotency_key,
    leaseExpiresAtMs: i64n(r.lease_expires_at_ms),
    mode: DELIVERY[r.delivery],
    shard: r.shard,
    claimedAtMs: i64n(r.claimed_at_ms),
    checkpoint: r.checkpoint ?? undefined,
    progress: r.progress ?? 0,
    nominalAtMs: i64n(r.nominal_at_ms),
    workflow: r.workflow_run_id ? workflowOf(r) : undefined,
    traceparent: r.traceparent ?? '',
    tracestate: r.tracestate ?? '',
    startMonoMs,
  };
}

/** A step's delivery: its workflow run, step and parents' outputs. */
function workflowOf(r: FiredRunRow): DeliveredRun['workflow'] {
  const parentOutputs: Record<string, Buffer> = {};
  const names = r.parent_steps ?? [];
  names.forEach((n, i) => (parentOutputs[n] = r.parent_outputs?.[i] ?? Buffer.alloc(0)));
  return { workflowRunId: r.workflow_run_id ?? '', step: r.workflow_step ?? '', parentOutputs };
}

/** One ScheduleBatch answer: references only, never the payload. due_at_ms goes out as a number (cheaper to encode than a decimal string). */
export function scheduledToWire(s: ScheduledJob): ScheduledRef {
  return {
    jobId: s.job.id,
    runId: s.run ? String(s.run.id) : '',
    shard: s.job.shard,
    dueAtMs: s.run?.due_at_ms ?? 0,
    status: s.run ? RUN_STATUS[s.run.status] : 'RUN_STATUS_UNSPECIFIED',
    delivery: DELIVERY[s.job.delivery],
    deduplicated: s.deduplicated,
  };
}

/** The Job a Schedule just created, from its input: what the insert wrote (timestamps are the daemon's clock). */
export function newJobToWire(s: ScheduledJob, i: ScheduleInput, nowMs: number): Job {
  return {
    id: s.job.id,
    namespace: i.namespace,
    queue: i.queue,
    payload: i.payload,
    priority: i.priority,
    dedupeKey: i.dedupeKey ?? '',
    delivery: DELIVERY[i.delivery],
    retry: { maxAttempts: i.maxAttempts, initialBackoffMs: i.initialBackoffMs, maxBackoffMs: i.maxBackoffMs },
    leaseMs: i.leaseMs,
    status: 'JOB_ACTIVE',
    shard: s.job.shard,
    createdAtMs: i64(nowMs),
    updatedAtMs: i64(nowMs),
    kind: 'JOB_ONCE',
    recurrence: null,
    nextFireAtMs: '0',
    occurrences: 0,
    pauseNote: '',
  };
}

/** The first Run a Schedule just created (not fired: every other field is its zero). */
export function newRunToWire(s: ScheduledJob, queue: string): Run | null {
  if (!s.run) return null;
  return {
    id: String(s.run.id),
    jobId: s.job.id,
    queue,
    shard: s.run.shard,
    attempt: 1,
    status: RUN_STATUS[s.run.status],
    dueAtMs: i64(s.run.due_at_ms),
    idempotencyKey: `${s.job.id}:${s.run.due_at_ms}`,
  };
}

/** GetJob's counts of a recurring job. */
export function countsToWire(c: JobCountsRow & { missed: number }): JobCounts {
  return { fired: String(c.fired), completed: String(c.completed), dead: String(c.dead), skipped: String(c.skipped), missed: String(c.missed), scheduled: String(c.scheduled) };
}
