/**
 * Plain shapes the client library hands out and takes in. Times are epoch
 * milliseconds as numbers (the wire's int64 strings are parsed), enums are
 * short lower-case names.
 */

export type DeliveryModeName = 'at_least_once' | 'at_most_once';
export type JobStatusName = 'active' | 'paused' | 'completed' | 'dead' | 'cancelled' | 'unspecified';
export type RunStatusName = 'scheduled' | 'fired' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'skipped' | 'buffered' | 'missed' | 'unspecified';
export type JobKindName = 'once' | 'cron' | 'interval' | 'unspecified';
/**
 * What an occurrence does when an earlier run of the job is still running
 * (Temporal's semantics): recorded as skipped; waits (at most one / every
 * one); asks the running one to stop and then runs; runs alongside.
 */
export type OverlapPolicyName = 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other' | 'allow_all';
/** A local time that does not exist (spring forward): fire at the first instant after the gap, or not that day. */
export type DstGapName = 'shift' | 'skip';
/** A local time that happens twice (fall back): fire at the first instant, or at both. */
export type DstRepeatName = 'once' | 'twice';
/** Missed occurrences in the catch-up window: each fires, or one (the latest) fires for all. */
export type CatchUpModeName = 'fire_all' | 'fire_once';

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

/**
 * A recurring schedule: the job fires at every occurrence of its cadence.
 * Exactly one of `cron` and `everyMs` is required. Unset fields take the
 * daemon's defaults (shown on each field); the daemon checks the ranges and
 * answers INVALID_ARGUMENT naming the field (e.g. `recurrence.cron.time_zone`).
 */
export interface RecurrenceInput {
  /** 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; @daily etc. At most 256 chars. */
  cron?: string;
  /** IANA time zone the cron expression is read in. Default "UTC". Cron only. */
  timeZone?: string;
  /** Default 'shift'. Cron only. */
  dstGap?: DstGapName;
  /** Default 'once'. Cron only. */
  dstRepeat?: DstRepeatName;
  /** Period in ms, 1,000 .. 366 days. Occurrences are phaseMs + k * everyMs after the Unix epoch. */
  everyMs?: number;
  /** Offset within the period, 0 <= phaseMs < everyMs. Default 0. Interval only. */
  phaseMs?: number;
  /** No occurrence before this instant. */
  startAt?: Date | number;
  /** No occurrence after this instant (inclusive); must be in the future. */
  endAt?: Date | number;
  /** Each occurrence fires later by a stable pseudo-random amount in [0, jitterMs]; at most 3,600,000. */
  jitterMs?: number;
  /** Most occurrences ever made; default no limit. */
  limit?: number;
  /** Default 'skip'. */
  overlap?: OverlapPolicyName;
  catchUp?: CatchUpInput;
  /** A run that ends dead pauses the job. */
  pauseOnFailure?: boolean;
}

export interface CatchUpInput {
  /** Occurrences missed by at most this long still fire. Default 300,000 (5 min); at most 7 days. */
  windowMs?: number;
  /** Default 'fire_all'. */
  mode?: CatchUpModeName;
  /** fire_all fires at most this many (the latest). Default 100; at most 10,000. */
  maxRuns?: number;
}

export interface ScheduleInput {
  queue: string;
  payload?: PayloadInput;
  /** Absolute due time. Exclusive with `delayMs` and `recurrence`; none of the three means now. */
  at?: Date | number;
  /** Due this many ms after the daemon receives the request. */
  delayMs?: number;
  /**
   * Makes the job recurring (exclusive with `at` and `delayMs`). Accepted by
   * `scheduleRecurring` and `scheduleBatch`; `schedule` refuses it, since a
   * recurring job may have no run yet.
   */
  recurrence?: RecurrenceInput;
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

/** A recurring job to schedule: `at` and `delayMs` make no sense for it. */
export type RecurringScheduleInput = Omit<ScheduleInput, 'at' | 'delayMs' | 'recurrence'> & { recurrence: RecurrenceInput };

export interface RescheduleInput {
  at?: Date | number;
  delayMs?: number;
}

export interface ListRunsInput {
  jobId?: string;
  queue?: string;
  status?: RunStatusName;
  /** Only runs due at or after this instant. */
  dueFrom?: Date | number;
  /** Only runs due at or before this instant. */
  dueTo?: Date | number;
  /** 1..1000; default 100. */
  pageSize?: number;
  pageToken?: string;
}

export interface ListJobsInput {
  queue?: string;
  /** Only jobs of this kind; default any. */
  kind?: Exclude<JobKindName, 'unspecified'>;
  status?: Exclude<JobStatusName, 'unspecified'>;
  namespace?: string;
  /** 1..1000; default 100. */
  pageSize?: number;
  pageToken?: string;
}

/** What `updateJob` changes; unset fields keep their value, and at least one must be set. */
export interface JobUpdateInput {
  /** A new rule (recurring jobs only, same cadence kind): occurrences made but not fired are made again by it. */
  recurrence?: RecurrenceInput;
  /** Replaces the payload ('' or an empty buffer clears it). */
  payload?: PayloadInput;
  priority?: number;
  /** Replaces the whole policy (unset members take the defaults). */
  retry?: RetryPolicyInput;
  leaseMs?: number;
}

export interface ResumeOptions {
  /**
   * False (default): occurrences that fell in the pause never happen; the
   * next one after now fires. True: they are caught up by the job's catch-up
   * policy.
   */
  catchUp?: boolean;
}

export interface TriggerOptions {
  /** Fire even if a run of the job is running (ignores the overlap policy). */
  overrideOverlap?: boolean;
}

export interface BackfillInput {
  /** Exclusive. */
  from: Date | number;
  /** Inclusive; not after now. */
  to: Date | number;
  /** Most occurrences to make (default 1,000; at most 10,000): a range holding more is refused, nothing made. */
  maxRuns?: number;
  /** Only count the range's occurrences (checked against maxRuns); nothing is made. */
  dryRun?: boolean;
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
  kind: JobKindName;
  /** The rule of a recurring job, every default spelled out; null for a one-shot job. */
  recurrence: RecurrenceInfo | null;
  /** When the job fires next: its earliest waiting occurrence's due time, else the next occurrence not made a run yet; 0 when none (one-shot, paused, ended). */
  nextFireAtMs: number;
  /** Occurrences made into runs so far (0 for a one-shot job). */
  occurrences: number;
  /** PauseJob's note, or why the job paused itself; '' when none. */
  pauseNote: string;
}

/** A recurring job's rule as the daemon stores it (defaults filled in). Exactly one of `cron` and `interval` is set. */
export interface RecurrenceInfo {
  cron: { expression: string; timeZone: string; dstGap: DstGapName; dstRepeat: DstRepeatName } | null;
  interval: { everyMs: number; phaseMs: number } | null;
  /** 0 when none. */
  startAtMs: number;
  /** 0 when never. */
  endAtMs: number;
  jitterMs: number;
  /** 0 when no limit. */
  limit: number;
  overlap: OverlapPolicyName;
  catchUp: { windowMs: number; mode: CatchUpModeName; maxRuns: number };
  pauseOnFailure: boolean;
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
  /** Recurring jobs: the occurrence's nominal time (before jitter); 0 otherwise (one-shot, trigger). */
  nominalAtMs: number;
  /** Why the run exists: 'schedule' (an occurrence), 'trigger', 'trigger_forced', 'backfill', 'replay'; '' for a one-shot job's. */
  origin: string;
  /** The worker (workerId) that last heartbeated or failed it; '' if none. */
  workerId: string;
  /** Last heartbeat's progress, 0..1. */
  progress: number;
  /** ReplayRuns: the dead run this run replays ('' otherwise). */
  replayOf: string;
  /** When CancelJob asked its worker to stop it (0: never). */
  cancelRequestedAtMs: number;
}

/** A run with every attempt of its occurrence (GetRun). */
export interface RunWithAttempts {
  run: RunInfo;
  /** Oldest first, this run included: each with its error, times and worker. */
  attempts: RunInfo[];
}

export interface ListDeadRunsInput {
  queue?: string;
  jobId?: string;
  /** Died at or after. */
  since?: Date | number;
  /** Died before. */
  until?: Date | number;
  /** Case-insensitive substring of the error. */
  errorContains?: string;
  /** 1..1000; default 100. */
  pageSize?: number;
  pageToken?: string;
}

/** ReplayRuns: these dead runs, or every dead run matching a filter (at most maxRuns, default 1000). */
export type ReplayRunsInput = { runIds: string[] } | { filter: Omit<ListDeadRunsInput, 'pageSize' | 'pageToken'>; maxRuns?: number };

export interface ReplayResult {
  replayed: { deadRunId: string; newRunId: string }[];
  /** Named runs that were not dead, or were replayed before. */
  skippedRunIds: string[];
}

/** A queue's limits across the cluster; 0 = no limit. */
export interface QueueLimitsInfo {
  queue: string;
  /** Runs handed out and unanswered at once. */
  maxInFlight: number;
  /** Runs handed out per second. */
  maxPerSecond: number;
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

/** What `scheduleRecurring` returns. */
export interface RecurringScheduleResult {
  job: JobInfo;
  /** The first occurrence's run; null when it is not made yet (beyond the daemon's window): see `job.nextFireAtMs`. */
  firstRun: RunInfo | null;
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
  /**
   * The job's first run; its due time and status are the existing run's when
   * deduplicated. A recurring job whose first occurrence is not made yet
   * (beyond the daemon's window) has none: then `id` is '', `dueAtMs` 0 and
   * `status` 'unspecified'.
   */
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
  /** One-shot job: every attempt, oldest first. Recurring job: its 10 latest runs, oldest first (`listRuns({ jobId })` pages through all). */
  runs: RunInfo[];
  /** Recurring job: its next 10 fire times (jitter included), ascending; empty when paused or ended, and for a one-shot job. */
  nextFireTimesMs: number[];
  /** Recurring job: outcomes of its runs so far; null for a one-shot job (its `runs` are all of them). */
  counts: JobCounts | null;
}

/** Outcomes of a recurring job's runs so far. */
export interface JobCounts {
  /** Runs handed to a worker (any outcome since). */
  fired: number;
  completed: number;
  dead: number;
  /** Occurrences skipped by the overlap policy. */
  skipped: number;
  /** Occurrences outside the catch-up window (or coalesced by fire_once). */
  missed: number;
  /** Runs waiting for their due time (or buffered). */
  scheduled: number;
}

export interface JobPage {
  /** Ordered by id; payloads are left out (empty). */
  jobs: JobInfo[];
  /** Empty when there are no more. */
  nextPageToken: string;
}

export interface PauseResult {
  job: JobInfo;
  /** Occurrences made into runs that had not fired, taken back. */
  runsWithdrawn: number;
}

export interface BackfillResult {
  /** Occurrences made into runs. */
  created: number;
  /** Occurrences of the range that already had a run. */
  alreadyExisted: number;
  /** Occurrences in the range (with dryRun: counted, none made). */
  occurrences: number;
}

export interface QueuePage {
  queues: string[];
  /** Empty when there are no more. */
  nextPageToken: string;
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
  /** Runs running when it came: their workers were asked to stop them (they end cancelled when they answer, or at their lease's end). */
  runsCancelling: number;
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
/** What a workflow step's delivery carries besides its payload. */
export interface WorkflowStepDeliveryInfo {
  workflowRunId: string;
  step: string;
  /** Each parent's Complete output, by parent step name (empty when it completed without one). */
  parentOutputs: Record<string, Buffer>;
}

export interface DeliveredRunInfo {
  runId: string;
  jobId: string;
  queue: string;
  attempt: number;
  payload: Buffer;
  dueAtMs: number;
  /**
   * When the daemon released the run to this stream: handed to it at or
   * after dueAtMs, or, handed over ahead (staged), dueAtMs itself. Never before dueAtMs.
   */
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
  arrivedAtMs: number;
  /**
   * Staged runs (a worker that subscribed with `stageAheadMs`): how long after
   * arrivedAtMs the run may start, in ms (the time the daemon saw left until
   * dueAtMs, less how much slower than the fastest lately its batch came);
   * 0: at once (also a staged run whose due time had come by its arrival).
   * createWorker waits it out before calling the handler.
   */
  startInMs: number;
  /**
   * Wall-clock epoch ms when this worker took the run to run: arrivedAtMs,
   * or for a staged run handed to createWorker's handler, the end of its hold.
   */
  receivedAtMs: number;
  /** receivedAtMs - dueAtMs: how late the run reached its handler. */
  lagMs: number;
  /** What to echo when answering this delivery. */
  ref: DeliveryRefInfo;
  /** The last checkpoint heartbeated for this occurrence (an earlier delivery or attempt): resume from it. Empty on a first delivery. */
  checkpoint: Buffer;
  /** The progress heartbeated with it, 0..1. */
  progress: number;
  /** Set when the run is a workflow step: its workflow run, step name and parents' outputs. */
  workflow: WorkflowStepDeliveryInfo | null;
  /** Recurring jobs: the occurrence's nominal time; 0 otherwise. */
  nominalAtMs: number;
  /**
   * The run's trace context (W3C `traceparent`; empty when it carries none):
   * createWorker's handler runs in a span that is its child (tracing.ts).
   */
  traceparent: string;
  /** W3C `tracestate` that goes with it; usually empty. */
  tracestate: string;
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
