/**
 * Input validation for every RPC. Each failure is INVALID_ARGUMENT with a
 * message naming the field and the rule. Validation turns wire messages into
 * domain inputs; nothing unvalidated reaches the database.
 */
import type { DeliveryRef } from '../run-ref.js';
import { invalidArgument } from '../errors.js';
import type { DeliveryMode, JobKind, JobStatus, RunStatus } from '../db/queries/columns.js';
import type { JobUpdate } from '../recurring/recurring-service.js';
import type { UpdateJobRequest__Output } from '../../proto/gen/timelane/v1/UpdateJobRequest.js';
import type { ListDeadRunsRequest__Output } from '../../proto/gen/timelane/v1/ListDeadRunsRequest.js';
import type { ReplayRunsRequest__Output } from '../../proto/gen/timelane/v1/ReplayRunsRequest.js';
import type { DeadRunsFilter } from '../scheduling/dead-letters.js';
import type { ScheduleInput } from '../scheduling/scheduling-service.js';
import type { ScheduleRequest__Output } from '../../proto/gen/timelane/v1/ScheduleRequest.js';
import type { ScheduleBatchRequest__Output } from '../../proto/gen/timelane/v1/ScheduleBatchRequest.js';
import type { DeliveryRef__Output } from '../../proto/gen/timelane/v1/DeliveryRef.js';
import type { Subscribe__Output } from '../../proto/gen/timelane/v1/Subscribe.js';
import { recurrenceInput } from './recurrence-input.js';

export const QUEUE_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
export const NAMESPACE_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_ID_RE = /^[1-9][0-9]{0,15}$/;
const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;
const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;

export interface Limits {
  maxPayloadBytes: number;
  defaultLeaseMs: number;
}

export const DEFAULT_RETRY = { maxAttempts: 3, initialBackoffMs: 1_000, maxBackoffMs: 300_000 };

/** The last instant Postgres and JavaScript dates both hold (9999-12-31T23:59:59.999Z): larger epoch ms are refused. */
export const MAX_EPOCH_MS = 253_402_300_799_999;

/** The queue of recurring workflow starts, run by the daemon itself (workflows/scheduled-starts.ts). */
const RESERVED_QUEUE = 'timelane:workflow-start';
/**
 * A queue no run is ever scheduled on: a worker library closing opens a
 * stream on it only to send its last answers (they are judged by their
 * refs, whatever the stream's queues), so that stream is handed no run.
 */
export const NO_RUNS_QUEUE = 'timelane:none';

/** A queue a caller may take runs from: not the daemon's own. */
export function ownQueue(field: string, v: string): string {
  if (v === RESERVED_QUEUE) throw invalidArgument(field, `"${v}" is reserved: the daemon runs its recurring workflow starts there`);
  return v;
}

/** A queue a caller may schedule runs on: not the daemon's own, nor the one that never has runs. */
function scheduleQueue(field: string, v: string): string {
  if (v === NO_RUNS_QUEUE) throw invalidArgument(field, `"${v}" is reserved: no run is ever scheduled there`);
  return ownQueue(field, v);
}

export function queueName(field: string, v: string): string {
  if (!v) throw invalidArgument(field, 'is required');
  if (!QUEUE_RE.test(v)) throw invalidArgument(field, `must be 1..128 chars of [A-Za-z0-9_.:-] (got "${v.slice(0, 140)}")`);
  return v;
}

/** A queue as a caller of every namespace may name it: `queue`, or a namespace's `ns/queue` (tenancy.ts). */
export function queueRef(field: string, v: string): string {
  const slash = v.indexOf('/');
  if (slash < 0) return queueName(field, v);
  if (!NAMESPACE_RE.test(v.slice(0, slash))) throw invalidArgument(field, `"${v.slice(0, 80)}": the part before "/" must be a namespace`);
  queueName(field, v.slice(slash + 1));
  return v;
}

export function jobId(field: string, v: string): string {
  if (!v) throw invalidArgument(field, 'is required');
  if (!UUID_RE.test(v)) throw invalidArgument(field, `must be a UUID (got "${v.slice(0, 64)}")`);
  return v.toLowerCase();
}

export function runId(field: string, v: string): number {
  if (!v) throw invalidArgument(field, 'is required');
  if (!RUN_ID_RE.test(v)) throw invalidArgument(field, `must be a positive decimal integer (got "${v.slice(0, 64)}")`);
  const n = Number(v);
  // Larger ids would be rounded to another run's (ids are JavaScript numbers in the daemon).
  if (!Number.isSafeInteger(n)) throw invalidArgument(field, `must be at most ${Number.MAX_SAFE_INTEGER} (got "${v}")`);
  return n;
}

function int64(field: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isSafeInteger(n)) throw invalidArgument(field, `must be an integer in the safe range (got "${v}")`);
  return n;
}

/** Resolves a `when` oneof (at_ms / delay_ms / now) to a due time in epoch ms. */
export function dueTime(prefix: string, m: { when?: string; atMs?: string; delayMs?: string; now?: boolean }, nowMs: number, choices = 'at_ms, delay_ms, now or recurrence'): number {
  switch (m.when) {
    case 'atMs': {
      const at = int64(`${prefix}at_ms`, m.atMs);
      if (at < nowMs - ONE_YEAR_MS) throw invalidArgument(`${prefix}at_ms`, 'must not be more than 1 year in the past');
      if (at > nowMs + TEN_YEARS_MS) throw invalidArgument(`${prefix}at_ms`, 'must be at most 10 years ahead');
      return at;
    }
    case 'delayMs': {
      const d = int64(`${prefix}delay_ms`, m.delayMs);
      if (d < 0 || d > TEN_YEARS_MS) throw invalidArgument(`${prefix}delay_ms`, 'must be between 0 and 10 years');
      return Math.floor(nowMs) + d;
    }
    case 'now':
      if (m.now !== true) throw invalidArgument(`${prefix}now`, 'must be true when set');
      return Math.floor(nowMs);
    default:
      throw invalidArgument(`${prefix}when`, `exactly one of ${choices} is required`);
  }
}

function deliveryMode(field: string, v: unknown): DeliveryMode {
  switch (v) {
    case 'DELIVERY_MODE_UNSPECIFIED':
    case 'AT_LEAST_ONCE':
      return 'at_least_once';
    case 'AT_MOST_ONCE':
      return 'at_most_once';
    default:
      throw invalidArgument(field, `unknown enum value ${String(v)}`);
  }
}

function intIn(field: string, v: number, lo: number, hi: number): number {
  if (!Number.isInteger(v) || v < lo || v > hi) throw invalidArgument(field, `must be between ${lo} and ${hi} (got ${v})`);
  return v;
}

export function scheduleInput(req: ScheduleRequest__Output, nowMs: number, limits: Limits, prefix = ''): ScheduleInput {
  const namespace = req.namespace || 'default';
  if (!NAMESPACE_RE.test(namespace)) throw invalidArgument(`${prefix}namespace`, `must be 1..64 chars of [A-Za-z0-9_.-] (got "${namespace.slice(0, 80)}")`);
  const queue = scheduleQueue(`${prefix}queue`, queueName(`${prefix}queue`, req.queue));
  const payload = req.payload ?? Buffer.alloc(0);
  if (payload.length > limits.maxPayloadBytes) throw invalidArgument(`${prefix}payload`, `must be at most ${limits.maxPayloadBytes} bytes (got ${payload.length})`);
  const recurrence = req.when === 'recurrence' && req.recurrence ? recurrenceInput(prefix, req.recurrence, nowMs) : null;
  const dueAtMs = recurrence ? 0 : dueTime(prefix, req, nowMs);
  const priority = intIn(`${prefix}priority`, req.priority, -1000, 1000);
  if (req.dedupeKey.length > 256) throw invalidArgument(`${prefix}dedupe_key`, `must be at most 256 chars (got ${req.dedupeKey.length})`);
  if (req.dedupeKey.includes('\u0000')) throw invalidArgument(`${prefix}dedupe_key`, 'must not contain U+0000 (Postgres text cannot hold it)');
  const delivery = deliveryMode(`${prefix}delivery`, req.delivery);
  const r = req.retry;
  const maxAttempts = r?.maxAttempts ? intIn(`${prefix}retry.max_attempts`, r.maxAttempts, 1, 100) : DEFAULT_RETRY.maxAttempts;
  const initialBackoffMs = r?.initialBackoffMs ? intIn(`${prefix}retry.initial_backoff_ms`, r.initialBackoffMs, 1, 86_400_000) : DEFAULT_RETRY.initialBackoffMs;
  const maxBackoffMs = r?.maxBackoffMs ? intIn(`${prefix}retry.max_backoff_ms`, r.maxBackoffMs, 1, 86_400_000) : Math.max(DEFAULT_RETRY.maxBackoffMs, initialBackoffMs);
  if (maxBackoffMs < initialBackoffMs) throw invalidArgument(`${prefix}retry.max_backoff_ms`, 'must be at least retry.initial_backoff_ms');
  const leaseMs = req.leaseMs ? intIn(`${prefix}lease_ms`, req.leaseMs, 1_000, 3_600_000) : limits.defaultLeaseMs;
  return { namespace, queue, payload, dueAtMs, priority, dedupeKey: req.dedupeKey || null, delivery, maxAttempts, initialBackoffMs, maxBackoffMs, leaseMs, recurrence };
}

/** Most requests in one ScheduleBatch. */
export const MAX_BATCH = 1000;
const BATCH_ID_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface ScheduleBatchInput {
  inputs: ScheduleInput[];
  /** Batch idempotency key; null when the request names none. */
  batchId: string | null;
}

export function scheduleBatch(req: ScheduleBatchRequest__Output, nowMs: number, limits: Limits): ScheduleBatchInput {
  const n = req.requests.length;
  if (n === 0 || n > MAX_BATCH) throw invalidArgument('requests', `must hold 1..${MAX_BATCH} requests (got ${n})`);
  const inputs = new Array<ScheduleInput>(n);
  for (let i = 0; i < n; i++) inputs[i] = scheduleInput(req.requests[i], nowMs, limits, `requests[${i}].`);
  const recurring = inputs.findIndex((i) => i.recurrence !== null);
  if (recurring >= 0) {
    const once = inputs.findIndex((i) => i.recurrence === null);
    if (once >= 0) throw invalidArgument(`requests[${once}].when`, `a batch holds one-shot jobs or recurring jobs, not both (requests[${recurring}] is recurring)`);
  }
  if (!req.batchId) return { inputs, batchId: null };
  if (!BATCH_ID_RE.test(req.batchId)) throw invalidArgument('batch_id', `must be 1..128 chars of [A-Za-z0-9_.:-] (got "${req.batchId.slice(0, 140)}")`);
  if (recurring >= 0) throw invalidArgument('batch_id', 'is for one-shot batches; make recurring jobs idempotent with dedupe_key');
  return { inputs, batchId: req.batchId };
}

/**
 * A batch with batch_id uses one namespace. Checked on the namespaces the
 * caller's requests resolve to (an empty one is a bound caller's own), not
 * on what they spell.
 */
export function oneBatchNamespace(inputs: readonly { namespace: string }[]): void {
  const ns = inputs[0].namespace;
  const other = inputs.findIndex((i) => i.namespace !== ns);
  if (other >= 0) throw invalidArgument(`requests[${other}].namespace`, `must be "${ns}" like requests[0]: a batch with batch_id uses one namespace`);
}

const RUN_STATUS: Record<string, RunStatus | null> = {
  RUN_STATUS_UNSPECIFIED: null,
  RUN_SCHEDULED: 'scheduled',
  RUN_FIRED: 'fired',
  RUN_COMPLETED: 'completed',
  RUN_FAILED: 'failed',
  RUN_DEAD: 'dead',
  RUN_CANCELLED: 'cancelled',
  RUN_SKIPPED: 'skipped',
  RUN_BUFFERED: 'buffered',
  RUN_MISSED: 'missed',
};

export function runStatusFilter(field: string, v: unknown): RunStatus | null {
  if (typeof v !== 'string' || !(v in RUN_STATUS)) throw invalidArgument(field, `unknown enum value ${String(v)}`);
  return RUN_STATUS[v];
}

export function pageSize(field: string, v: number): number {
  if (v === 0) return 100;
  return intIn(field, v, 1, 1000);
}

export function pageToken(field: string, v: string): number {
  if (!v) return 0;
  if (!/^\d{1,16}$/.test(v)) throw invalidArgument(field, 'is not a token this server issued');
  return Number(v);
}

export type DeliveryRefInput = DeliveryRef;

const MAX_INT4 = 2 ** 31 - 1;
/** Shard numbers are below the cluster's shard count, at most 65,536 (migration 0001). */
const MAX_SHARD = 65_535;

export function deliveryRef(field: string, ref: DeliveryRef__Output | null): DeliveryRefInput {
  if (!ref) throw invalidArgument(field, 'is required');
  const id = runId(`${field}.run_id`, ref.runId);
  const fence = int64(`${field}.fence`, ref.fence);
  if (fence < 1) throw invalidArgument(`${field}.fence`, 'must be the fence of the delivery (>= 1)');
  // Both go to int columns: a larger value would fail the whole statement (a batch of other workers' completes too).
  if (ref.delivery < 1 || ref.delivery > MAX_INT4) throw invalidArgument(`${field}.delivery`, 'must be the delivery number (1..2^31-1)');
  // Absent (an older client): the daemon looks the shard up. A shard that
  // does not match the run makes the answer match nothing: refused, not applied.
  const shard = ref._shard === 'shard' && ref.shard !== undefined ? ref.shard : null;
  if (shard !== null && shard > MAX_SHARD) throw invalidArgument(`${field}.shard`, `must be a shard number (0..${MAX_SHARD})`);
  return { runId: id, fence, deliveries: ref.delivery, shard };
}

export interface SubscribeInput {
  queues: string[];
  maxInFlight: number;
  workerId: string;
  /** Runs as RunBatch messages (else one DeliveredRun per message, as clients before RunBatch expect). */
  batchRuns: boolean;
  /** Runs may be handed over (staged) up to this many ms before due; 0: at due. */
  stageAheadMs: number;
}

/**
 * A worker's free text bound for a text column (a Fail's message): never
 * refused — an answer must always be recorded — but cut to `max` chars and
 * with U+0000, which Postgres text cannot hold, replaced by U+FFFD.
 */
export function answerText(v: string, max: number): string {
  const cut = v.length > max ? v.slice(0, max) : v;
  return cut.includes('\u0000') ? cut.replaceAll('\u0000', '\uFFFD') : cut;
}

/** Longest hold a worker may take runs ahead for (Subscribe.stage_ahead_ms). */
export const MAX_STAGE_AHEAD_MS = 1000;

export function subscribeInput(s: Subscribe__Output): SubscribeInput {
  if (s.queues.length === 0 || s.queues.length > 64) throw invalidArgument('subscribe.queues', `must name 1..64 queues (got ${s.queues.length})`);
  const queues = s.queues.map((q, i) => ownQueue(`subscribe.queues[${i}]`, queueRef(`subscribe.queues[${i}]`, q)));
  const maxInFlight = intIn('subscribe.max_in_flight', s.maxInFlight, 1, 10_000);
  if (s.workerId.length > 128) throw invalidArgument('subscribe.worker_id', 'must be at most 128 chars');
  if (s.workerId.includes('\u0000')) throw invalidArgument('subscribe.worker_id', 'must not contain U+0000');
  const stageAheadMs = intIn('subscribe.stage_ahead_ms', s.stageAheadMs, 0, MAX_STAGE_AHEAD_MS);
  return { queues: [...new Set(queues)], maxInFlight, workerId: s.workerId || 'anonymous', batchRuns: s.batchRuns, stageAheadMs };
}

const JOB_STATUS: Record<string, JobStatus | null> = {
  JOB_STATUS_UNSPECIFIED: null,
  JOB_ACTIVE: 'active',
  JOB_PAUSED: 'paused',
  JOB_COMPLETED: 'completed',
  JOB_DEAD: 'dead',
  JOB_CANCELLED: 'cancelled',
};
const JOB_KIND: Record<string, JobKind | null> = { JOB_KIND_UNSPECIFIED: null, JOB_ONCE: 'once', JOB_CRON: 'cron', JOB_INTERVAL: 'interval' };

export function jobStatusFilter(field: string, v: unknown): JobStatus | null {
  if (typeof v !== 'string' || !(v in JOB_STATUS)) throw invalidArgument(field, `unknown enum value ${String(v)}`);
  return JOB_STATUS[v];
}

export function jobKindFilter(field: string, v: unknown): JobKind | null {
  if (typeof v !== 'string' || !(v in JOB_KIND)) throw invalidArgument(field, `unknown enum value ${String(v)}`);
  return JOB_KIND[v];
}

export function namespaceFilter(field: string, v: string): string | null {
  if (!v) return null;
  if (!NAMESPACE_RE.test(v)) throw invalidArgument(field, `must be 1..64 chars of [A-Za-z0-9_.-] (got "${v.slice(0, 80)}")`);
  return v;
}

/** A page token of ListJobs: the last job id of the previous page. */
export function jobPageToken(field: string, v: string): string | null {
  if (!v) return null;
  if (!UUID_RE.test(v)) throw invalidArgument(field, 'is not a token this server issued');
  return v.toLowerCase();
}

/** Free text an operator gives (a pause note): at most `max` chars, no U+0000. */
export function noteText(field: string, v: string, max: number): string {
  if (v.length > max) throw invalidArgument(field, `must be at most ${max} chars (got ${v.length})`);
  if (v.includes('\u0000')) throw invalidArgument(field, 'must not contain U+0000');
  return v;
}

/** A backfill range (from, to]: to not after now, and after from. */
export function backfillRange(fromV: string, toV: string, maxRuns: number, nowMs: number): { fromMs: number; toMs: number; maxRuns: number } {
  const fromMs = int64('from_ms', fromV);
  const toMs = int64('to_ms', toV);
  if (fromMs < 0) throw invalidArgument('from_ms', 'must be epoch ms >= 0');
  if (toMs <= fromMs) throw invalidArgument('to_ms', 'must be after from_ms');
  if (toMs > nowMs) throw invalidArgument('to_ms', 'must not be in the future (the schedule fires those itself)');
  return { fromMs, toMs, maxRuns: maxRuns === 0 ? 0 : intIn('max_runs', maxRuns, 1, 10_000) };
}

/** UpdateJob's optional settings, validated like Schedule's. */
export function jobUpdate(req: UpdateJobRequest__Output, nowMs: number, limits: Limits): JobUpdate {
  const payload = req._payload === 'payload' && req.payload !== undefined ? req.payload : null;
  if (payload && payload.length > limits.maxPayloadBytes) throw invalidArgument('payload', `must be at most ${limits.maxPayloadBytes} bytes (got ${payload.length})`);
  const priority = req._priority === 'priority' && req.priority !== undefined ? intIn('priority', req.priority, -1000, 1000) : null;
  const leaseMs = req._leaseMs === 'leaseMs' && req.leaseMs !== undefined ? intIn('lease_ms', req.leaseMs, 1_000, 3_600_000) : null;
  let retry: JobUpdate['retry'] = null;
  if (req.retry) {
    const r = req.retry;
    const maxAttempts = r.maxAttempts ? intIn('retry.max_attempts', r.maxAttempts, 1, 100) : DEFAULT_RETRY.maxAttempts;
    const initialBackoffMs = r.initialBackoffMs ? intIn('retry.initial_backoff_ms', r.initialBackoffMs, 1, 86_400_000) : DEFAULT_RETRY.initialBackoffMs;
    const maxBackoffMs = r.maxBackoffMs ? intIn('retry.max_backoff_ms', r.maxBackoffMs, 1, 86_400_000) : Math.max(DEFAULT_RETRY.maxBackoffMs, initialBackoffMs);
    if (maxBackoffMs < initialBackoffMs) throw invalidArgument('retry.max_backoff_ms', 'must be at least retry.initial_backoff_ms');
    retry = { maxAttempts, initialBackoffMs, maxBackoffMs };
  }
  const recurrence = req.recurrence ? recurrenceInput('', req.recurrence, nowMs) : null;
  if (!recurrence && !payload && priority === null && leaseMs === null && !retry) throw invalidArgument('update', 'names nothing to change (recurrence, payload, priority, retry or lease_ms)');
  return { recurrence, payload, priority, retry, leaseMs };
}

/** ListRuns' due-time range: epoch ms, null where unbounded (0 on the wire). */
export function dueRange(req: { dueFromMs: string; dueToMs: string }): { dueFromMs: number | null; dueToMs: number | null } {
  const from = int64('due_from_ms', req.dueFromMs);
  const to = int64('due_to_ms', req.dueToMs);
  if (from < 0 || from > MAX_EPOCH_MS) throw invalidArgument('due_from_ms', 'must be epoch ms, 0..253402300799999');
  if (to < 0 || to > MAX_EPOCH_MS) throw invalidArgument('due_to_ms', 'must be epoch ms, 0..253402300799999');
  if (from > 0 && to > 0 && to < from) throw invalidArgument('due_to_ms', 'must not be before due_from_ms');
  return { dueFromMs: from || null, dueToMs: to || null };
}

/** ListDeadRuns' filter (also ReplayRuns' filter, prefixed "filter."). */
export function deadRunsFilter(p: string, req: ListDeadRunsRequest__Output, limit: number): DeadRunsFilter {
  const since = int64(`${p}since_ms`, req.sinceMs);
  const until = int64(`${p}until_ms`, req.untilMs);
  if (since < 0 || since > MAX_EPOCH_MS) throw invalidArgument(`${p}since_ms`, 'must be epoch ms, 0..253402300799999');
  if (until < 0 || until > MAX_EPOCH_MS) throw invalidArgument(`${p}until_ms`, 'must be epoch ms, 0..253402300799999');
  if (since > 0 && until > 0 && until <= since) throw invalidArgument(`${p}until_ms`, 'must be after since_ms');
  const err = req.errorContains ? noteText(`${p}error_contains`, req.errorContains, 256) : null;
  let after: DeadRunsFilter['after'] = null;
  if (req.pageToken) {
    const m = /^(\d{1,15}):(\d{1,16})$/.exec(req.pageToken);
    // Epoch ms up to 9999-12-31 (what a timestamp holds), ids in the safe range.
    if (!m || Number(m[1]) > MAX_EPOCH_MS || !Number.isSafeInteger(Number(m[2]))) throw invalidArgument(`${p}page_token`, 'is not a token this server issued');
    after = { finishedAtMs: Number(m[1]), id: Number(m[2]) };
  }
  return {
    queue: req.queue ? queueRef(`${p}queue`, req.queue) : null,
    jobId: req.jobId ? jobId(`${p}job_id`, req.jobId) : null,
    sinceMs: since || null,
    untilMs: until || null,
    errorContains: err,
    after,
    limit,
  };
}

/** ReplayRuns: run ids, or a filter, not both. */
export function replaySelection(req: ReplayRunsRequest__Output): { ids: number[] } | { filter: DeadRunsFilter } {
  if (req.runIds.length > 0 && req.filter) throw invalidArgument('run_ids', 'give run_ids or filter, not both');
  if (req.runIds.length > 0) {
    if (req.runIds.length > 1000) throw invalidArgument('run_ids', `must hold at most 1000 ids (got ${req.runIds.length})`);
    return { ids: [...new Set(req.runIds.map((id, i) => runId(`run_ids[${i}]`, id)))] };
  }
  if (!req.filter) throw invalidArgument('run_ids', 'give run_ids or a filter');
  const max = req.maxRuns === 0 ? 1000 : intIn('max_runs', req.maxRuns, 1, 10_000);
  return { filter: deadRunsFilter('filter.', { ...req.filter, pageToken: '' }, max) };
}
