/**
 * Plain shapes the client library hands out and takes in. Times are epoch
 * milliseconds as numbers (the wire's int64 strings are parsed), enums are
 * short lower-case names.
 */

export type DeliveryModeName = 'at_least_once' | 'at_most_once';
export type JobStatusName = 'active' | 'completed' | 'dead' | 'cancelled' | 'unspecified';
export type RunStatusName = 'scheduled' | 'fired' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'unspecified';

/** A payload as given to `schedule`: bytes as-is, strings as UTF-8, anything else as JSON. */
export type PayloadInput = Buffer | Uint8Array | string | object;

export interface RetryPolicyInput {
  /** Total attempts including the first, 1..100. Default (server side) 3. */
  maxAttempts?: number;
  /** Backoff before attempt 2, in ms; doubles each attempt. Default 1000. */
  initialBackoffMs?: number;
  /** Cap on one backoff, in ms. Default 300,000. */
  maxBackoffMs?: number;
}

export interface ScheduleInput {
  queue: string;
  payload?: PayloadInput;
  /** Absolute due time. Exclusive with `delayMs`; neither means now. */
  at?: Date | number;
  /** Due this many ms after the daemon receives the request. */
  delayMs?: number;
  /** Scope for `dedupeKey`; empty means "default". */
  namespace?: string;
  /** Higher fires first among runs due in the same millisecond (-1000..1000). */
  priority?: number;
  dedupeKey?: string;
  /** Default at_least_once. */
  delivery?: DeliveryModeName;
  retry?: RetryPolicyInput;
  /** Lease of a delivered run in ms (1,000..3,600,000); default 30,000. */
  leaseMs?: number;
}

export interface RescheduleInput {
  at?: Date | number;
  delayMs?: number;
}

export interface ListRunsInput {
  jobId?: string;
  queue?: string;
  status?: RunStatusName;
  /** 1..1000; default 100. */
  pageSize?: number;
  pageToken?: string;
}

export interface RetryPolicyInfo {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export interface JobInfo {
  id: string;
  namespace: string;
  queue: string;
  payload: Buffer;
  priority: number;
  dedupeKey: string;
  delivery: DeliveryModeName;
  retry: RetryPolicyInfo;
  leaseMs: number;
  status: JobStatusName;
  shard: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface RunInfo {
  id: string;
  jobId: string;
  queue: string;
  shard: number;
  attempt: number;
  status: RunStatusName;
  dueAtMs: number;
  /** When the run was handed to a worker stream; 0 until that is recorded (with the answer, or within a second). */
  firedAtMs: number;
  /** When the current delivery was claimed (the fenced UPDATE), 0 until fired. */
  claimedAtMs: number;
  /** firedAt - dueAt as measured by the firing daemon. */
  lagMs: number;
  /** Fencing token the run was last claimed under (0 until fired). */
  fence: number;
  deliveries: number;
  idempotencyKey: string;
  /** 0 until completed / failed / dead / cancelled. */
  finishedAtMs: number;
  /** Message of the last Fail. */
  error: string;
  leaseExpiresAtMs: number;
}

export interface ShardInfo {
  shard: number;
  /** Member id; empty when unowned. */
  owner: string;
  fence: number;
  /** Only known by the owner (0 elsewhere). */
  runsInWindow: number;
  /** Earliest scheduled run; 0 if none. */
  nextDueAtMs: number;
  acquiredAtMs: number;
  /** Owned by the daemon that answered. */
  ownedHere: boolean;
  /** ms since the owner acquired it (0 if unowned). */
  leaseAgeMs: number;
  /** now - earliest scheduled due time when that is past (0 when nothing is overdue). */
  lagMs: number;
  /** Owner the current assignment wants (cluster mode). */
  assignedTo: string;
}

export interface MemberInfo {
  id: string;
  grpcAddress: string;
  ownedShards: number;
  startedAtMs: number;
  lastSeenMs: number;
}

/** One shard changing owner, as planned or carried out by an operator move. */
export interface ShardMoveInfo {
  shard: number;
  /** Empty when the shard was unowned. */
  fromMember: string;
  /** Empty when no member is left to take it. */
  toMember: string;
}

export interface MoveShardOptions {
  /** How long the daemon waits for the new owner to hold the shard, in ms (100..300,000). Default (server side) 10,000. */
  timeoutMs?: number;
}

export interface MoveShardResult {
  move: ShardMoveInfo;
  /** Request → new owner recorded in Postgres under a higher fence, in ms. */
  handoffMs: number;
}

export interface DrainMemberOptions {
  /** Take the member back into the assignment instead. */
  undo?: boolean;
  /** How long the daemon waits for the moves to land, in ms (100..300,000). Default (server side) 15,000. */
  timeoutMs?: number;
}

export interface DrainResult {
  moves: ShardMoveInfo[];
  /** Every move landed before the timeout. */
  completed: boolean;
}

export interface RebalanceOptions {
  /** Only plan and return the moves. */
  dryRun?: boolean;
  /** How long the daemon waits for the moves to land, in ms (100..300,000). Default (server side) 15,000. */
  timeoutMs?: number;
}

export interface RebalanceResult {
  moves: ShardMoveInfo[];
  /** False for a dry run. */
  executed: boolean;
  /** Every move landed before the timeout (false for a dry run). */
  completed: boolean;
  /** Shards per member after the plan. */
  shardsPerMember: Record<string, number>;
}

export interface ScheduleResult {
  job: JobInfo;
  /** The job's first run. */
  run: RunInfo;
  /** True when `dedupeKey` matched an existing job and nothing was created. */
  deduplicated: boolean;
}

/**
 * What `scheduleBatch` reports about one input: identities and timing, never
 * the payload or the job's settings (`getJob` returns those).
 */
export interface BatchScheduled {
  /** `delivery` is the existing job's when deduplicated. */
  job: Pick<JobInfo, 'id' | 'shard' | 'delivery'>;
  /** The job's first run; its due time and status are the existing run's when deduplicated. */
  run: Pick<RunInfo, 'id' | 'jobId' | 'shard' | 'dueAtMs' | 'status'>;
  /** True when `dedupeKey` matched an existing job (or an earlier input of the batch) and nothing was created. */
  deduplicated: boolean;
}

export interface ScheduleBatchOptions {
  /**
   * Batch idempotency key, 1..128 chars of [A-Za-z0-9_.:-]. Resending a batch
   * with the same key (after a lost reply, a timeout, UNAVAILABLE) schedules
   * nothing twice: if the first attempt committed, the reply describes it
   * (same ids). Every input must use the same namespace; resend the same
   * inputs. Keys are kept at least 24 hours; never reuse one for another batch.
   */
  batchId?: string;
}

export interface JobWithRuns {
  job: JobInfo;
  /** Every attempt, oldest first. */
  runs: RunInfo[];
}

export interface RunPage {
  runs: RunInfo[];
  /** Empty when there are no more. */
  nextPageToken: string;
}

export interface CancelResult {
  job: JobInfo;
  /** Runs moved from scheduled to cancelled by this call. */
  runsCancelled: number;
}

/** Echoes one delivery of a run in Complete / Fail / Heartbeat. */
export interface DeliveryRefInfo {
  runId: string;
  /** Kept as the wire's decimal string so it is echoed exactly. */
  fence: string;
  delivery: number;
  /** The run's shard (lets the daemon name it in every answer statement). */
  shard?: number;
}

/** A run handed to a worker. */
export interface DeliveredRunInfo {
  runId: string;
  jobId: string;
  queue: string;
  attempt: number;
  payload: Buffer;
  dueAtMs: number;
  /** When the daemon handed the run to this stream (never before dueAtMs). */
  firedAtMs: number;
  /** When the daemon claimed it (a few ms before due with claim-ahead). */
  claimedAtMs: number;
  shard: number;
  /** Fencing token the run was claimed under. */
  fence: number;
  /** Which hand-out this is (1 for the first). */
  delivery: number;
  /** Same on every redelivery of this run (job id + scheduled time). */
  idempotencyKey: string;
  /** 0 for at_most_once. */
  leaseExpiresAtMs: number;
  mode: DeliveryModeName;
  /** Wall-clock epoch ms (sub-millisecond precision) when the message arrived. */
  receivedAtMs: number;
  /** receivedAtMs - dueAtMs. */
  lagMs: number;
  /** What to echo when answering this delivery. */
  ref: DeliveryRefInfo;
}

/** The daemon's answer to a Complete, Fail or Heartbeat. */
export interface AckInfo {
  runId: string;
  /** A google.rpc.Code: 0 OK, 3 INVALID_ARGUMENT, 5 NOT_FOUND, 9 FAILED_PRECONDITION, 14 UNAVAILABLE. */
  code: number;
  /** The code's name, e.g. "FAILED_PRECONDITION". */
  codeName: string;
  message: string;
  /** Set on an OK Fail: the run that retries it, if any. */
  retryRunId: string;
}
