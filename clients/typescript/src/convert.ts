/**
 * Conversions between the wire messages (proto/gen types, as loaded with
 * longs/enums as strings) and the library's plain shapes (types.ts).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Ack__Output } from '../proto/gen/timelane/v1/Ack.js';
import type { DeliveredRun__Output } from '../proto/gen/timelane/v1/DeliveredRun.js';
import type { DeliveryMode, DeliveryMode__Output } from '../proto/gen/timelane/v1/DeliveryMode.js';
import type { Job__Output } from '../proto/gen/timelane/v1/Job.js';
import type { JobCounts__Output } from '../proto/gen/timelane/v1/JobCounts.js';
import type { JobStatus, JobStatus__Output } from '../proto/gen/timelane/v1/JobStatus.js';
import type { Member__Output } from '../proto/gen/timelane/v1/Member.js';
import type { RetryPolicy } from '../proto/gen/timelane/v1/RetryPolicy.js';
import type { Run__Output } from '../proto/gen/timelane/v1/Run.js';
import type { RunStatus, RunStatus__Output } from '../proto/gen/timelane/v1/RunStatus.js';
import type { ScheduleRequest } from '../proto/gen/timelane/v1/ScheduleRequest.js';
import type { ScheduledRef__Output } from '../proto/gen/timelane/v1/ScheduledRef.js';
import type { ShardInfo__Output } from '../proto/gen/timelane/v1/ShardInfo.js';
import type { ShardMove__Output } from '../proto/gen/timelane/v1/ShardMove.js';
import type {
  AckInfo,
  BatchScheduled,
  DeliveredRunInfo,
  DeliveryModeName,
  JobCounts,
  JobInfo,
  JobStatusName,
  MemberInfo,
  PayloadInput,
  RetryPolicyInput,
  RunInfo,
  RunStatusName,
  ScheduleInput,
  ShardInfo,
  ShardMoveInfo,
  WorkflowStepDeliveryInfo,
} from './types.js';
import { jobKindName, recurrenceInfo, recurrenceToWire } from './recurrence.js';
import { wholeNumber } from './wire-numbers.js';

/** Parses a wire int64 (decimal string; "" or missing as 0) into a number. */
export function int64(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  return Number(value);
}

const NO_BYTES = Buffer.alloc(0);

export function payloadBytes(payload: PayloadInput | undefined): Buffer {
  if (payload === undefined || payload === null) return NO_BYTES;
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/** An int64 field as a number: protobufjs encodes numbers far cheaper than decimal strings. */
function wholeMs(field: string, value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`${field}: must be a finite number of milliseconds`);
  return Math.round(value);
}

/** The `when` oneof of ScheduleRequest / RescheduleJobRequest: at, delay, or now. */
export function whenFields(at: Date | number | undefined, delayMs: number | undefined): Pick<ScheduleRequest, 'atMs' | 'delayMs' | 'now'> {
  if (at !== undefined && delayMs !== undefined) throw new TypeError('at, delayMs: give at most one');
  if (at !== undefined) return { atMs: wholeMs('at', at instanceof Date ? at.getTime() : at) };
  if (delayMs !== undefined) {
    if (delayMs < 0) throw new RangeError('delayMs: must be >= 0');
    return { delayMs: wholeMs('delayMs', delayMs) };
  }
  return { now: true };
}

const DELIVERY_TO_WIRE: Record<DeliveryModeName, DeliveryMode> = {
  at_least_once: 'AT_LEAST_ONCE',
  at_most_once: 'AT_MOST_ONCE',
};

/** A delivery mode by name; any other name is refused here (a typo must not quietly become at_least_once). */
export function deliveryToWire(field: string, mode: DeliveryModeName | undefined): DeliveryMode | undefined {
  if (mode === undefined) return undefined;
  if (!Object.hasOwn(DELIVERY_TO_WIRE, mode)) throw new TypeError(`${field}: must be "at_least_once" or "at_most_once" (got ${JSON.stringify(mode)})`);
  return DELIVERY_TO_WIRE[mode];
}

export function retryToWire(retry: RetryPolicyInput | undefined, field = 'retry'): RetryPolicy | null {
  if (!retry) return null;
  return {
    maxAttempts: wholeNumber(`${field}.maxAttempts`, retry.maxAttempts),
    initialBackoffMs: wholeNumber(`${field}.initialBackoffMs`, retry.initialBackoffMs),
    maxBackoffMs: wholeNumber(`${field}.maxBackoffMs`, retry.maxBackoffMs),
  };
}

/**
 * A ScheduleRequest holding only the fields that differ from their defaults
 * (proto3 treats an absent field as its default): less to convert and encode
 * here, and less for the daemon to decode — per request, 1000 times a batch.
 */
export function scheduleRequest(input: ScheduleInput): ScheduleRequest {
  let req: ScheduleRequest;
  if (input.recurrence !== undefined) {
    if (input.at !== undefined || input.delayMs !== undefined) throw new TypeError('recurrence, at, delayMs: give at most one (a recurring job fires by its rule)');
    req = { queue: input.queue, recurrence: recurrenceToWire(input.recurrence) };
  } else {
    req = { queue: input.queue, ...whenFields(input.at, input.delayMs) };
  }
  if (input.namespace) req.namespace = input.namespace;
  const payload = payloadBytes(input.payload);
  if (payload.length > 0) req.payload = payload;
  const priority = wholeNumber('priority', input.priority, 'int32');
  if (priority) req.priority = priority;
  if (input.dedupeKey) req.dedupeKey = input.dedupeKey;
  const delivery = deliveryToWire('delivery', input.delivery);
  if (delivery) req.delivery = delivery;
  if (input.retry) req.retry = retryToWire(input.retry);
  const leaseMs = wholeNumber('leaseMs', input.leaseMs);
  if (leaseMs) req.leaseMs = leaseMs;
  return req;
}

/** One ScheduleBatch answer as the library hands it out. */
export function batchScheduled(r: ScheduledRef__Output): BatchScheduled {
  return {
    job: { id: r.jobId, shard: r.shard, delivery: deliveryName(r.delivery) },
    run: { id: r.runId, jobId: r.jobId, shard: r.shard, dueAtMs: int64(r.dueAtMs), status: RUN_STATUS[r.status] ?? 'unspecified' },
    deduplicated: r.deduplicated,
  };
}

export function deliveryName(mode: DeliveryMode__Output): DeliveryModeName {
  return mode === 'AT_MOST_ONCE' ? 'at_most_once' : 'at_least_once';
}

const JOB_STATUS: Record<JobStatus__Output, JobStatusName> = {
  JOB_STATUS_UNSPECIFIED: 'unspecified',
  JOB_ACTIVE: 'active',
  JOB_COMPLETED: 'completed',
  JOB_DEAD: 'dead',
  JOB_CANCELLED: 'cancelled',
  JOB_PAUSED: 'paused',
};

const RUN_STATUS: Record<RunStatus__Output, RunStatusName> = {
  RUN_STATUS_UNSPECIFIED: 'unspecified',
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

export function jobStatusToWire(name: JobStatusName | undefined): JobStatus {
  if (name === undefined) return 'JOB_STATUS_UNSPECIFIED';
  const entry = Object.entries(JOB_STATUS).find(([, v]) => v === name);
  if (!entry) throw new RangeError(`status: unknown job status "${name}"`);
  return entry[0] as JobStatus__Output;
}

export function runStatusToWire(name: RunStatusName | undefined): RunStatus {
  if (name === undefined) return 'RUN_STATUS_UNSPECIFIED';
  const entry = Object.entries(RUN_STATUS).find(([, v]) => v === name);
  if (!entry) throw new RangeError(`status: unknown run status "${name}"`);
  return entry[0] as RunStatus__Output;
}

export function jobInfo(job: Job__Output | null | undefined): JobInfo {
  if (!job) throw new Error('timelane: response is missing its job');
  return {
    id: job.id,
    namespace: job.namespace,
    queue: job.queue,
    payload: job.payload,
    priority: job.priority,
    dedupeKey: job.dedupeKey,
    delivery: deliveryName(job.delivery),
    retry: {
      maxAttempts: job.retry?.maxAttempts ?? 0,
      initialBackoffMs: job.retry?.initialBackoffMs ?? 0,
      maxBackoffMs: job.retry?.maxBackoffMs ?? 0,
    },
    leaseMs: job.leaseMs,
    status: JOB_STATUS[job.status] ?? 'unspecified',
    shard: job.shard,
    createdAtMs: int64(job.createdAtMs),
    updatedAtMs: int64(job.updatedAtMs),
    kind: jobKindName(job.kind),
    recurrence: recurrenceInfo(job.recurrence),
    nextFireAtMs: int64(job.nextFireAtMs),
    occurrences: job.occurrences,
    pauseNote: job.pauseNote,
  };
}

/** A recurring job's counts; null when absent (one-shot job). */
export function jobCounts(c: JobCounts__Output | null | undefined): JobCounts | null {
  if (!c) return null;
  return {
    fired: int64(c.fired),
    completed: int64(c.completed),
    dead: int64(c.dead),
    skipped: int64(c.skipped),
    missed: int64(c.missed),
    scheduled: int64(c.scheduled),
  };
}

export function runInfo(run: Run__Output | null | undefined): RunInfo {
  if (!run) throw new Error('timelane: response is missing its run');
  return {
    id: run.id,
    jobId: run.jobId,
    queue: run.queue,
    shard: run.shard,
    attempt: run.attempt,
    status: RUN_STATUS[run.status] ?? 'unspecified',
    dueAtMs: int64(run.dueAtMs),
    firedAtMs: int64(run.firedAtMs),
    claimedAtMs: int64(run.claimedAtMs),
    lagMs: Number(run.lagMs),
    fence: int64(run.fence),
    deliveries: run.deliveries,
    idempotencyKey: run.idempotencyKey,
    finishedAtMs: int64(run.finishedAtMs),
    error: run.error,
    leaseExpiresAtMs: int64(run.leaseExpiresAtMs),
    nominalAtMs: int64(run.nominalAtMs),
    origin: run.origin,
    workerId: run.workerId,
    progress: Number(run.progress),
    replayOf: run.replayOf,
    cancelRequestedAtMs: int64(run.cancelRequestedAtMs),
  };
}

export function shardInfo(s: ShardInfo__Output): ShardInfo {
  return {
    shard: s.shard,
    owner: s.owner,
    fence: int64(s.fence),
    runsInWindow: s.runsInWindow,
    nextDueAtMs: int64(s.nextDueAtMs),
    acquiredAtMs: int64(s.acquiredAtMs),
    ownedHere: s.ownedHere,
    leaseAgeMs: int64(s.leaseAgeMs),
    lagMs: Number(s.lagMs),
    assignedTo: s.assignedTo,
  };
}

export function shardMoveInfo(m: ShardMove__Output | null | undefined): ShardMoveInfo {
  if (!m) throw new Error('timelane: response is missing its move');
  return { shard: m.shard, fromMember: m.fromMember, toMember: m.toMember };
}

/** An optional wait in ms as the wire's uint32 (0 = the server's default). */
export function waitMs(field: string, value: number | undefined): number {
  if (value === undefined) return 0;
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new RangeError(`${field}: must be a non-negative integer of milliseconds`);
  return value;
}

export function memberInfo(m: Member__Output): MemberInfo {
  return {
    id: m.id,
    grpcAddress: m.grpcAddress,
    ownedShards: m.ownedShards,
    startedAtMs: int64(m.startedAtMs),
    lastSeenMs: int64(m.lastSeenMs),
  };
}

/** A delivered run; `startInMs`: how long after `receivedAtMs` (its arrival) a staged run may start (0: now). */
export function deliveredRunInfo(run: DeliveredRun__Output, receivedAtMs: number, startInMs = 0): DeliveredRunInfo {
  const dueAtMs = int64(run.dueAtMs);
  return {
    runId: run.runId,
    jobId: run.jobId,
    queue: run.queue,
    attempt: run.attempt,
    payload: run.payload,
    dueAtMs,
    firedAtMs: int64(run.firedAtMs),
    claimedAtMs: int64(run.claimedAtMs),
    shard: run.shard,
    fence: int64(run.fence),
    delivery: run.delivery,
    idempotencyKey: run.idempotencyKey,
    leaseExpiresAtMs: int64(run.leaseExpiresAtMs),
    mode: deliveryName(run.mode),
    arrivedAtMs: receivedAtMs,
    startInMs,
    receivedAtMs,
    lagMs: receivedAtMs - dueAtMs,
    ref: { runId: run.runId, fence: run.fence === '' ? '0' : run.fence, delivery: run.delivery, shard: run.shard },
    checkpoint: run.checkpoint ?? Buffer.alloc(0),
    progress: Number(run.progress),
    nominalAtMs: int64(run.nominalAtMs),
    workflow: stepDeliveryInfo(run.workflow),
    traceparent: run.traceparent,
    tracestate: run.tracestate,
  };
}

/** A workflow step's delivery: its workflow run, step and parents' outputs; null for other runs. */
function stepDeliveryInfo(w: DeliveredRun__Output['workflow']): WorkflowStepDeliveryInfo | null {
  if (!w || !w.workflowRunId) return null;
  return { workflowRunId: w.workflowRunId, step: w.step, parentOutputs: { ...w.parentOutputs } };
}

export function statusName(code: number): string {
  return GrpcStatus[code] ?? `CODE_${code}`;
}

export function ackInfo(ack: Ack__Output): AckInfo {
  return {
    runId: ack.runId,
    code: ack.code,
    codeName: statusName(ack.code),
    message: ack.message,
    retryRunId: ack.retryRunId,
  };
}
