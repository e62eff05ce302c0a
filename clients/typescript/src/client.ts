/**
 * Promise API over the Scheduler and Admin services. Inputs are friendly
 * (Dates, delays, JSON payloads); outputs are the plain shapes of
 * types.ts. A failed call rejects with grpc-js's ServiceError itself
 * (`.code`, `.details`, `.metadata`); bad input caught before sending rejects
 * with a TypeError or RangeError.
 */
import * as grpc from '@grpc/grpc-js';
import { tokenInterceptors } from './credentials.js';
import type { BackfillJobResponse__Output as BackfillJobOut } from '../proto/gen/timelane/v1/BackfillJobResponse.js';
import type { CancelJobResponse__Output as CancelJobOut } from '../proto/gen/timelane/v1/CancelJobResponse.js';
import type { DrainMemberResponse__Output as DrainMemberOut } from '../proto/gen/timelane/v1/DrainMemberResponse.js';
import type { GetJobResponse__Output as GetJobOut } from '../proto/gen/timelane/v1/GetJobResponse.js';
import type { GetRunResponse__Output as GetRunOut } from '../proto/gen/timelane/v1/GetRunResponse.js';
import type { ListDeadRunsResponse__Output as ListDeadRunsOut } from '../proto/gen/timelane/v1/ListDeadRunsResponse.js';
import type { ListDeadRunsRequest } from '../proto/gen/timelane/v1/ListDeadRunsRequest.js';
import type { ReplayRunsResponse__Output as ReplayRunsOut } from '../proto/gen/timelane/v1/ReplayRunsResponse.js';
import type { SetQueueLimitsResponse__Output as SetQueueLimitsOut } from '../proto/gen/timelane/v1/SetQueueLimitsResponse.js';
import type { ListQueueLimitsResponse__Output as ListQueueLimitsOut } from '../proto/gen/timelane/v1/ListQueueLimitsResponse.js';
import type { ListJobsResponse__Output as ListJobsOut } from '../proto/gen/timelane/v1/ListJobsResponse.js';
import type { ListMembersResponse__Output as ListMembersOut } from '../proto/gen/timelane/v1/ListMembersResponse.js';
import type { ListRunsResponse__Output as ListRunsOut } from '../proto/gen/timelane/v1/ListRunsResponse.js';
import type { ListQueuesResponse__Output as ListQueuesOut } from '../proto/gen/timelane/v1/ListQueuesResponse.js';
import type { ListShardsResponse__Output as ListShardsOut } from '../proto/gen/timelane/v1/ListShardsResponse.js';
import type { MoveShardResponse__Output as MoveShardOut } from '../proto/gen/timelane/v1/MoveShardResponse.js';
import type { PauseJobResponse__Output as PauseJobOut } from '../proto/gen/timelane/v1/PauseJobResponse.js';
import type { RebalanceResponse__Output as RebalanceOut } from '../proto/gen/timelane/v1/RebalanceResponse.js';
import type { RescheduleJobResponse__Output as RescheduleOut } from '../proto/gen/timelane/v1/RescheduleJobResponse.js';
import type { ResumeJobResponse__Output as ResumeJobOut } from '../proto/gen/timelane/v1/ResumeJobResponse.js';
import type { ScheduleBatchResponse__Output as ScheduleBatchOut } from '../proto/gen/timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleResponse__Output as ScheduleOut } from '../proto/gen/timelane/v1/ScheduleResponse.js';
import type { TriggerJobResponse__Output as TriggerJobOut } from '../proto/gen/timelane/v1/TriggerJobResponse.js';
import type { UpdateJobRequest } from '../proto/gen/timelane/v1/UpdateJobRequest.js';
import type { UpdateJobResponse__Output as UpdateJobOut } from '../proto/gen/timelane/v1/UpdateJobResponse.js';
import type { AdminClient } from '../proto/gen/timelane/v1/Admin.js';
import type { SchedulerClient } from '../proto/gen/timelane/v1/Scheduler.js';
import type { WorkflowsClient } from '../proto/gen/timelane/v1/Workflows.js';
import type { PutWorkflowResponse__Output as PutWorkflowOut } from '../proto/gen/timelane/v1/PutWorkflowResponse.js';
import type { StartWorkflowResponse__Output as StartWorkflowOut } from '../proto/gen/timelane/v1/StartWorkflowResponse.js';
import type { StartWorkflowsResponse__Output as StartWorkflowsOut } from '../proto/gen/timelane/v1/StartWorkflowsResponse.js';
import type { GetWorkflowRunResponse__Output as GetWorkflowRunOut } from '../proto/gen/timelane/v1/GetWorkflowRunResponse.js';
import type { ListWorkflowRunsResponse__Output as ListWorkflowRunsOut } from '../proto/gen/timelane/v1/ListWorkflowRunsResponse.js';
import type { RetryWorkflowRunResponse__Output as RetryWorkflowRunOut } from '../proto/gen/timelane/v1/RetryWorkflowRunResponse.js';
import type { CancelWorkflowRunResponse__Output as CancelWorkflowRunOut } from '../proto/gen/timelane/v1/CancelWorkflowRunResponse.js';
import { wholeNumber } from './wire-numbers.js';
import { definitionToWire, runStateToWire, scheduleRequest as workflowScheduleRequest, startRequest, workflowRunInfo, workflowStepInfo } from './workflow-convert.js';
import type {
  ListWorkflowRunsInput,
  ScheduleWorkflowInput,
  StartWorkflowInput,
  WorkflowDefinitionInput,
  WorkflowRunInfo,
  WorkflowRunPage,
  WorkflowRunWithSteps,
} from './workflow-types.js';
import {
  batchScheduled,
  jobCounts,
  jobInfo,
  jobStatusToWire,
  memberInfo,
  payloadBytes,
  retryToWire,
  runInfo,
  runStatusToWire,
  scheduleRequest,
  shardInfo,
  shardMoveInfo,
  waitMs,
  whenFields,
} from './convert.js';
import { instantMs, jobKindToWire, recurrenceToWire, uint32 } from './recurrence.js';
import { timelaneV1 } from './proto.js';
import { traceSchedule } from './tracing.js';
import type { ScheduleRequest } from '../proto/gen/timelane/v1/ScheduleRequest.js';
import type {
  BackfillInput,
  BackfillResult,
  BatchScheduled,
  CancelResult,
  DrainMemberOptions,
  DrainResult,
  JobInfo,
  JobPage,
  JobUpdateInput,
  JobWithRuns,
  ListJobsInput,
  ListRunsInput,
  MemberInfo,
  MoveShardOptions,
  MoveShardResult,
  RebalanceOptions,
  RebalanceResult,
  PauseResult,
  RecurringScheduleInput,
  RecurringScheduleResult,
  RescheduleInput,
  ResumeOptions,
  RunInfo,
  QueuePage,
  RunPage,
  RunWithAttempts,
  ListDeadRunsInput,
  ReplayRunsInput,
  ReplayResult,
  QueueLimitsInfo,
  ScheduleBatchOptions,
  ScheduleInput,
  ScheduleResult,
  ShardInfo,
  TriggerOptions,
} from './types.js';

export interface TimelaneClientOptions {
  /** Default: insecure (plaintext). TLS: `tlsCredentials(…)` from credentials.ts. */
  credentials?: grpc.ChannelCredentials;
  /** Bearer token sent with every call (a daemon with `--auth-file`). */
  token?: string;
  /** Deadline for each call, in ms. Default 30,000; 0 for none. */
  timeoutMs?: number;
}

export const DEFAULT_ADDRESS = '127.0.0.1:7070';

/** Most schedules in one scheduleBatch call (the daemon refuses more). */
export const MAX_BATCH = 1000;
/** Largest ScheduleBatch request the daemon accepts, in bytes (its gRPC receive limit). */
export const MAX_BATCH_BYTES = 64 * 1024 * 1024;
/** The largest response the client reads: the daemon's own send limit. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Encoded bytes of one request besides its payload and names (tags, due time, settings), rounded up. */
const REQUEST_OVERHEAD = 40;
/** Encoded bytes of a recurrence rule besides its cron expression and time zone, rounded up. */
const RECURRENCE_OVERHEAD = 80;

type Invoke<Res> = (options: grpc.CallOptions, callback: grpc.requestCallback<Res>) => unknown;

export class TimelaneClient {
  private readonly scheduler: SchedulerClient;
  private readonly admin: AdminClient;
  private readonly workflows: WorkflowsClient;
  private readonly timeoutMs: number;

  constructor(
    readonly address: string = DEFAULT_ADDRESS,
    opts: TimelaneClientOptions = {},
  ) {
    const pkg = timelaneV1();
    const credentials = opts.credentials ?? grpc.credentials.createInsecure();
    const interceptors = tokenInterceptors(opts.token);
    // As large as the daemon sends (64 MiB): a GetWorkflowRun with outputs, or a
    // ListRuns page with payloads, may pass grpc-js's default 4 MiB.
    this.scheduler = new pkg.Scheduler(address, credentials, { interceptors, 'grpc.max_receive_message_length': MAX_RESPONSE_BYTES });
    this.admin = new pkg.Admin(address, credentials, { channelOverride: this.scheduler.getChannel(), interceptors });
    this.workflows = new pkg.Workflows(address, credentials, { channelOverride: this.scheduler.getChannel(), interceptors });
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /**
   * Schedules a one-shot job: one run at `at`, after `delayMs`, or now. A
   * recurring job goes through `scheduleRecurring` (its first run may not
   * exist yet, so its result has a nullable `firstRun`): an input with
   * `recurrence` is refused here with a TypeError.
   */
  async schedule(input: ScheduleInput): Promise<ScheduleResult> {
    if (input.recurrence !== undefined) throw new TypeError('recurrence: schedule makes one-shot jobs; use scheduleRecurring for a recurring job');
    const req = scheduleRequest(input);
    const send = (md: grpc.Metadata) => this.call<ScheduleOut>((o, cb) => this.scheduler.schedule(req, md, o, cb));
    const res = await traceSchedule(`timelane.schedule ${req.queue}`, scheduleAttributes(req), send, scheduledAttributes);
    return { job: jobInfo(res.job), run: runInfo(res.run), deduplicated: res.deduplicated };
  }

  /**
   * Schedules a recurring job: a run at every occurrence of its cron
   * expression or period. `firstRun` is the first occurrence's run when the
   * daemon made it already (it is due within the daemon's window), else null
   * (`job.nextFireAtMs` says when it falls). With `dedupeKey`, creating it is
   * idempotent. Exactly one of `recurrence.cron` and `recurrence.everyMs` is
   * required (TypeError otherwise).
   */
  async scheduleRecurring(input: RecurringScheduleInput): Promise<RecurringScheduleResult> {
    if (!input.recurrence) throw new TypeError('recurrence: is required');
    const req = scheduleRequest(input);
    const send = (md: grpc.Metadata) => this.call<ScheduleOut>((o, cb) => this.scheduler.schedule(req, md, o, cb));
    const res = await traceSchedule(`timelane.schedule ${req.queue}`, scheduleAttributes(req), send, scheduledAttributes);
    return { job: jobInfo(res.job), firstRun: res.run ? runInfo(res.run) : null, deduplicated: res.deduplicated };
  }

  /**
   * Schedules 1..1000 jobs in one transaction: all or none. Results are in
   * input order and hold ids, shard, due time and status, never payloads, so
   * the reply stays small (about 60 bytes per input) whatever the payloads.
   * The request must encode to at most 64 MiB (the daemon's receive limit):
   * a larger batch is refused here with a RangeError. With `batchId`, a
   * retried batch is never applied twice (see ScheduleBatchOptions).
   *
   * A batch holds one-shot jobs or recurring jobs, not both, and `batchId`
   * is for one-shot batches only (the daemon refuses either with
   * INVALID_ARGUMENT); make recurring jobs idempotent with `dedupeKey`.
   */
  async scheduleBatch(inputs: readonly ScheduleInput[], opts: ScheduleBatchOptions = {}): Promise<BatchScheduled[]> {
    if (inputs.length === 0 || inputs.length > MAX_BATCH) throw new RangeError(`inputs: must hold 1..${MAX_BATCH} schedules (got ${inputs.length})`);
    const requests = new Array<ScheduleRequest>(inputs.length);
    let bytes = 0;
    for (let k = 0; k < inputs.length; k++) {
      const r = scheduleRequest(inputs[k]);
      bytes += ((r.payload as Buffer | undefined)?.length ?? 0) + (r.queue?.length ?? 0) + (r.namespace?.length ?? 0) + (r.dedupeKey?.length ?? 0) + REQUEST_OVERHEAD;
      if (r.recurrence) bytes += (r.recurrence.cron?.expression?.length ?? 0) + (r.recurrence.cron?.timeZone?.length ?? 0) + RECURRENCE_OVERHEAD;
      requests[k] = r;
    }
    if (bytes > MAX_BATCH_BYTES) throw new RangeError(`inputs: the batch encodes to about ${bytes} bytes, over the daemon's ${MAX_BATCH_BYTES}-byte limit; split it`);
    const req = { requests, batchId: opts.batchId ?? '' };
    const send = (md: grpc.Metadata) => this.call<ScheduleBatchOut>((o, cb) => this.scheduler.scheduleBatch(req, md, o, cb));
    const res = await traceSchedule('timelane.schedule_batch', { 'rpc.method': 'ScheduleBatch', 'timelane.batch.size': requests.length }, send, () => ({}));
    const out = new Array<BatchScheduled>(res.scheduled.length);
    for (let k = 0; k < out.length; k++) out[k] = batchScheduled(res.scheduled[k]);
    return out;
  }

  /** A job with its runs (a recurring job: its latest 10), and for a recurring job its next 10 fire times and counts. */
  async getJob(jobId: string): Promise<JobWithRuns> {
    const res = await this.call<GetJobOut>((o, cb) => this.scheduler.getJob({ jobId }, o, cb));
    return {
      job: jobInfo(res.job),
      runs: res.runs.map(runInfo),
      nextFireTimesMs: res.nextFireTimesMs.map(Number),
      counts: jobCounts(res.counts),
    };
  }

  /** Jobs of every kind, ordered by id, without payloads; filters combine. */
  async listJobs(input: ListJobsInput = {}): Promise<JobPage> {
    const req = {
      queue: input.queue ?? '',
      kind: jobKindToWire(input.kind),
      status: jobStatusToWire(input.status),
      namespace: input.namespace ?? '',
      pageSize: wholeNumber('pageSize', input.pageSize),
      pageToken: input.pageToken ?? '',
    };
    const res = await this.call<ListJobsOut>((o, cb) => this.scheduler.listJobs(req, o, cb));
    return { jobs: res.jobs.map(jobInfo), nextPageToken: res.nextPageToken };
  }

  /**
   * Holds an active recurring job: no occurrence is made until `resumeJob`;
   * occurrences made but not fired are taken back. FAILED_PRECONDITION for a
   * one-shot job or one that is not active. `note` (at most 1024 chars) is
   * kept as `job.pauseNote`.
   */
  async pauseJob(jobId: string, note = ''): Promise<PauseResult> {
    const res = await this.call<PauseJobOut>((o, cb) => this.scheduler.pauseJob({ jobId, note }, o, cb));
    return { job: jobInfo(res.job), runsWithdrawn: res.runsWithdrawn };
  }

  /** Releases a paused job: from the next occurrence after now, or (`catchUp`) from where it stopped, by its catch-up policy. */
  async resumeJob(jobId: string, opts: ResumeOptions = {}): Promise<JobInfo> {
    const req = { jobId, catchUp: opts.catchUp ?? false };
    const res = await this.call<ResumeJobOut>((o, cb) => this.scheduler.resumeJob(req, o, cb));
    return jobInfo(res.job);
  }

  /**
   * Changes a job's rule or what its runs carry; unset fields keep their
   * value. Runs already fired are not touched; occurrences made but not
   * fired are made again by the new rule. An update naming nothing is
   * refused here with a TypeError.
   */
  async updateJob(jobId: string, update: JobUpdateInput): Promise<JobInfo> {
    const req: UpdateJobRequest = { jobId };
    if (update.recurrence !== undefined) req.recurrence = recurrenceToWire(update.recurrence);
    // proto3 `optional`: setting the field (even to its zero) is what says "change it".
    if (update.payload !== undefined) req.payload = payloadBytes(update.payload);
    if (update.priority !== undefined) req.priority = wholeNumber('priority', update.priority, 'int32');
    if (update.retry !== undefined) req.retry = retryToWire(update.retry);
    if (update.leaseMs !== undefined) req.leaseMs = uint32('leaseMs', update.leaseMs);
    if (Object.keys(req).length === 1) throw new TypeError('update: names nothing to change (recurrence, payload, priority, retry or leaseMs)');
    const res = await this.call<UpdateJobOut>((o, cb) => this.scheduler.updateJob(req, o, cb));
    return jobInfo(res.job);
  }

  /** A run of a recurring job, due now, outside its rule (origin 'trigger', or 'trigger_forced' with `overrideOverlap`). */
  async triggerJob(jobId: string, opts: TriggerOptions = {}): Promise<RunInfo> {
    const req = { jobId, overrideOverlap: opts.overrideOverlap ?? false };
    const res = await this.call<TriggerJobOut>((o, cb) => this.scheduler.triggerJob(req, o, cb));
    return runInfo(res.run);
  }

  /**
   * Makes a recurring job's occurrences in (from, to] into runs that fire
   * now, in order (origin 'backfill'). An occurrence that already has a run
   * is not made again. `to` must not be after now.
   */
  async backfillJob(jobId: string, range: BackfillInput): Promise<BackfillResult> {
    const fromMs = epochMs('from', range.from);
    const toMs = epochMs('to', range.to);
    const req = { jobId, fromMs, toMs, maxRuns: range.maxRuns === undefined ? 0 : uint32('maxRuns', range.maxRuns), dryRun: range.dryRun ?? false };
    const res = await this.call<BackfillJobOut>((o, cb) => this.scheduler.backfillJob(req, o, cb));
    return { created: res.created, alreadyExisted: res.alreadyExisted, occurrences: res.occurrences };
  }

  async getRun(runId: string): Promise<RunInfo> {
    return (await this.getRunWithAttempts(runId)).run;
  }

  /** A run with every attempt of its occurrence, oldest first (errors, times, workers). */
  async getRunWithAttempts(runId: string): Promise<RunWithAttempts> {
    const res = await this.call<GetRunOut>((o, cb) => this.scheduler.getRun({ runId }, o, cb));
    return { run: runInfo(res.run), attempts: res.attempts.map(runInfo) };
  }

  /** Dead letters, newest death first (paged). */
  async listDeadRuns(input: ListDeadRunsInput = {}): Promise<RunPage> {
    const res = await this.call<ListDeadRunsOut>((o, cb) => this.scheduler.listDeadRuns(deadRunsRequest(input), o, cb));
    return { runs: res.runs.map(runInfo), nextPageToken: res.nextPageToken };
  }

  /** Replays dead runs as new runs due now (each dead run at most once). */
  async replayRuns(input: ReplayRunsInput): Promise<ReplayResult> {
    // One or the other: given both, the filter was dropped without a word.
    const given = (input ?? {}) as { runIds?: string[]; filter?: Parameters<typeof deadRunsRequest>[0]; maxRuns?: number };
    if ((given.runIds !== undefined) === (given.filter !== undefined)) throw new TypeError('runIds, filter: give exactly one');
    const req =
      given.runIds !== undefined
        ? { runIds: given.runIds }
        : { filter: deadRunsRequest(given.filter!), maxRuns: given.maxRuns === undefined ? 0 : uint32('maxRuns', given.maxRuns) };
    const res = await this.call<ReplayRunsOut>((o, cb) => this.scheduler.replayRuns(req, o, cb));
    return { replayed: res.replayed.map((r) => ({ deadRunId: r.deadRunId, newRunId: r.newRunId })), skippedRunIds: res.skippedRunIds };
  }

  /** Sets a queue's limits across the cluster (0 = no limit; both 0 removes them). Takes effect within a second. */
  async setQueueLimits(limits: QueueLimitsInfo): Promise<QueueLimitsInfo> {
    const req = { limits: { queue: limits.queue, maxInFlight: uint32('maxInFlight', limits.maxInFlight), maxPerSecond: uint32('maxPerSecond', limits.maxPerSecond) } };
    const res = await this.call<SetQueueLimitsOut>((o, cb) => this.admin.setQueueLimits(req, o, cb));
    return { queue: res.limits?.queue ?? limits.queue, maxInFlight: res.limits?.maxInFlight ?? 0, maxPerSecond: res.limits?.maxPerSecond ?? 0 };
  }

  async listQueueLimits(): Promise<QueueLimitsInfo[]> {
    const res = await this.call<ListQueueLimitsOut>((o, cb) => this.admin.listQueueLimits({}, o, cb));
    return res.limits.map((l) => ({ queue: l.queue, maxInFlight: l.maxInFlight, maxPerSecond: l.maxPerSecond }));
  }

  async listRuns(input: ListRunsInput = {}): Promise<RunPage> {
    const req = {
      jobId: input.jobId ?? '',
      queue: input.queue ?? '',
      status: runStatusToWire(input.status),
      pageSize: wholeNumber('pageSize', input.pageSize),
      pageToken: input.pageToken ?? '',
      // 0 means "no bound" on the wire: an invalid instant is refused, not sent as 0.
      dueFromMs: input.dueFrom === undefined ? 0 : instantMs('dueFrom', input.dueFrom),
      dueToMs: input.dueTo === undefined ? 0 : instantMs('dueTo', input.dueTo),
    };
    const res = await this.call<ListRunsOut>((o, cb) => this.scheduler.listRuns(req, o, cb));
    return { runs: res.runs.map(runInfo), nextPageToken: res.nextPageToken };
  }

  /** The queues that hold runs or recurring jobs, in name order, a page at a time (a namespace-bound caller: its own). */
  async listQueues(input: { pageSize?: number; pageToken?: string } = {}): Promise<QueuePage> {
    const req = { pageSize: wholeNumber('pageSize', input.pageSize), pageToken: input.pageToken ?? '' };
    const res = await this.call<ListQueuesOut>((o, cb) => this.scheduler.listQueues(req, o, cb));
    return { queues: res.queues, nextPageToken: res.nextPageToken };
  }

  async cancelJob(jobId: string): Promise<CancelResult> {
    const res = await this.call<CancelJobOut>((o, cb) => this.scheduler.cancelJob({ jobId }, o, cb));
    return { job: jobInfo(res.job), runsCancelled: res.runsCancelled, runsCancelling: res.runsCancelling };
  }

  /** Moves a job that has not fired to a new due time (neither at nor delayMs: now). */
  async rescheduleJob(jobId: string, when: RescheduleInput = {}): Promise<RunInfo> {
    const req = { jobId, ...whenFields(when.at, when.delayMs) };
    const res = await this.call<RescheduleOut>((o, cb) => this.scheduler.rescheduleJob(req, o, cb));
    return runInfo(res.run);
  }

  async listShards(): Promise<ShardInfo[]> {
    const res = await this.call<ListShardsOut>((o, cb) => this.admin.listShards({}, o, cb));
    return res.shards.map(shardInfo);
  }

  async listMembers(): Promise<MemberInfo[]> {
    const res = await this.call<ListMembersOut>((o, cb) => this.admin.listMembers({}, o, cb));
    return res.members.map(memberInfo);
  }

  /**
   * Moves one shard to a live member (cluster mode) and waits until the new
   * owner holds it under a higher fence. Rejects with FAILED_PRECONDITION
   * without a cluster (no REDIS_URL), for a drained target, or when the move
   * did not land within the timeout; INVALID_ARGUMENT for an unknown member
   * or shard.
   */
  async moveShard(shard: number, toMember: string, opts: MoveShardOptions = {}): Promise<MoveShardResult> {
    const req = { shard: uint32('shard', shard), toMember, timeoutMs: waitMs('timeoutMs', opts.timeoutMs) };
    if (!toMember) throw new TypeError('toMember: is required');
    const timeoutMs = req.timeoutMs;
    const res = await this.call<MoveShardOut>((o, cb) => this.admin.moveShard(req, o, cb), opsDeadline(timeoutMs, 10_000));
    return { move: shardMoveInfo(res.move), handoffMs: Number(res.handoffMs) };
  }

  /**
   * Moves every shard off a member (or, with `undo`, takes it back into the
   * assignment) and waits, bounded, for the moves to land. `completed` is
   * false when some had not landed at the timeout; they keep going.
   */
  async drainMember(memberId: string, opts: DrainMemberOptions = {}): Promise<DrainResult> {
    if (!memberId) throw new TypeError('memberId: is required');
    const timeoutMs = waitMs('timeoutMs', opts.timeoutMs);
    const req = { memberId, undo: opts.undo ?? false, timeoutMs };
    const res = await this.call<DrainMemberOut>((o, cb) => this.admin.drainMember(req, o, cb), opsDeadline(timeoutMs, 15_000));
    return { moves: res.moves.map(shardMoveInfo), completed: res.completed };
  }

  /**
   * Clears operator moves so the balanced assignment applies again, and
   * waits, bounded, for the moves to land. With `dryRun` only the plan is
   * returned.
   */
  async rebalance(opts: RebalanceOptions = {}): Promise<RebalanceResult> {
    const timeoutMs = waitMs('timeoutMs', opts.timeoutMs);
    const req = { dryRun: opts.dryRun ?? false, timeoutMs };
    const res = await this.call<RebalanceOut>((o, cb) => this.admin.rebalance(req, o, cb), opsDeadline(timeoutMs, 15_000));
    return {
      moves: res.moves.map(shardMoveInfo),
      executed: res.executed,
      completed: res.completed,
      shardsPerMember: { ...res.shardsPerMember },
    };
  }

  // ------------------------------------------------------------ workflows ---

  /** Stores a new version of a named definition (unless it equals the latest: `unchanged`). */
  async putWorkflow(definition: WorkflowDefinitionInput, namespace = ''): Promise<{ name: string; version: number; unchanged: boolean }> {
    const req = { namespace, definition: definitionToWire(definition) };
    const res = await this.call<PutWorkflowOut>((o, cb) => this.workflows.putWorkflow(req, o, cb));
    return { name: res.name, version: res.version, unchanged: res.unchanged };
  }

  /** Starts a workflow run (inline definition, or a stored one by name and version); its root steps are due at `at` (default now). */
  async startWorkflow(input: StartWorkflowInput): Promise<WorkflowRunInfo> {
    const req = startRequest(input);
    const res = await this.call<StartWorkflowOut>((o, cb) => this.workflows.startWorkflow(req, o, cb));
    return workflowRunInfo(res.run);
  }

  /**
   * Starts many workflow runs in one call and one transaction (all or none;
   * 1..1000 starts, at most 100,000 steps in all). Starts by a stored
   * definition (`workflow`) keep the request small. One run per input, in order.
   */
  async startWorkflows(inputs: StartWorkflowInput[]): Promise<WorkflowRunInfo[]> {
    const req = { starts: inputs.map(startRequest) };
    const res = await this.call<StartWorkflowsOut>((o, cb) => this.workflows.startWorkflows(req, o, cb));
    return res.runs.map(workflowRunInfo);
  }

  /**
   * A recurring start: each occurrence of the rule starts one run of a stored
   * definition. Returns the recurring job that holds the schedule (pause,
   * resume, update or cancel it like any job).
   */
  async scheduleWorkflow(input: ScheduleWorkflowInput): Promise<{ scheduleJobId: string }> {
    const req = workflowScheduleRequest(input);
    const res = await this.call<StartWorkflowOut>((o, cb) => this.workflows.startWorkflow(req, o, cb));
    return { scheduleJobId: res.scheduleJobId };
  }

  /** A workflow run with every step (state, attempts, times, lag); outputs only when asked. */
  async getWorkflowRun(id: string, opts: { outputs?: boolean } = {}): Promise<WorkflowRunWithSteps> {
    const res = await this.call<GetWorkflowRunOut>((o, cb) => this.workflows.getWorkflowRun({ id, includeOutputs: opts.outputs ?? false }, o, cb));
    return { run: workflowRunInfo(res.run), steps: res.steps.map(workflowStepInfo) };
  }

  /** Workflow runs, newest first; filters combine. */
  async listWorkflowRuns(input: ListWorkflowRunsInput = {}): Promise<WorkflowRunPage> {
    const req = { namespace: input.namespace ?? '', name: input.name ?? '', state: runStateToWire(input.state), pageSize: wholeNumber('pageSize', input.pageSize), pageToken: input.pageToken ?? '' };
    const res = await this.call<ListWorkflowRunsOut>((o, cb) => this.workflows.listWorkflowRuns(req, o, cb));
    return { runs: res.runs.map(workflowRunInfo), nextPageToken: res.nextPageToken };
  }

  /**
   * Partial re-run of a finished workflow run: failed, cancelled and
   * upstream-failed steps (and the succeeded steps in `fromSteps`) run again
   * with everything downstream of them; other succeeded steps keep their outputs.
   */
  async retryWorkflowRun(id: string, fromSteps: string[] = []): Promise<{ run: WorkflowRunInfo; stepsReset: string[] }> {
    const res = await this.call<RetryWorkflowRunOut>((o, cb) => this.workflows.retryWorkflowRun({ id, fromSteps }, o, cb));
    return { run: workflowRunInfo(res.run), stepsReset: res.stepsReset };
  }

  /** Cancels a running workflow run: nothing new starts; running steps' workers are asked to stop. */
  async cancelWorkflowRun(id: string): Promise<{ run: WorkflowRunInfo; runsCancelled: number; runsCancelling: number }> {
    const res = await this.call<CancelWorkflowRunOut>((o, cb) => this.workflows.cancelWorkflowRun({ id }, o, cb));
    return { run: workflowRunInfo(res.run), runsCancelled: res.runsCancelled, runsCancelling: res.runsCancelling };
  }

  /** Closes the channel; calls in progress are cancelled. */
  close(): void {
    this.scheduler.close();
  }

  /** `minDeadlineMs`: a call that waits server side gets at least this long, whatever the client's timeout. */
  private call<Res>(invoke: Invoke<Res>, minDeadlineMs = 0): Promise<Res> {
    const ms = this.timeoutMs > 0 ? Math.max(this.timeoutMs, minDeadlineMs) : 0;
    const options: grpc.CallOptions = ms > 0 ? { deadline: Date.now() + ms } : {};
    return new Promise<Res>((resolve, reject) => {
      invoke(options, (err, value) => {
        if (err) reject(err);
        else if (value === undefined) reject(new Error('timelane: empty response'));
        else resolve(value);
      });
    });
  }
}

/** Attributes of a Schedule call's span (tracing.ts): what it asks for, then what it made. */
function scheduleAttributes(req: ScheduleRequest): Record<string, string> {
  return { 'rpc.method': 'Schedule', 'timelane.queue': req.queue ?? '' };
}

function scheduledAttributes(res: ScheduleOut): Record<string, string> {
  return { 'timelane.job.id': res.job?.id ?? '', 'timelane.run.id': res.run?.id ?? '' };
}

/** Deadline of an operator call: its server-side wait (or the server's default) plus slack for the RPC itself. */
function opsDeadline(timeoutMs: number, serverDefaultMs: number): number {
  return (timeoutMs || serverDefaultMs) + 5_000;
}

function epochMs(field: string, value: Date | number): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (!Number.isFinite(ms)) throw new RangeError(`${field}: must be a valid instant`);
  return Math.round(ms);
}

function deadRunsRequest(input: Omit<ListDeadRunsInput, 'pageSize' | 'pageToken'> & Pick<ListDeadRunsInput, 'pageSize' | 'pageToken'>): ListDeadRunsRequest {
  // 0 means "no bound" on the wire: an invalid date (NaN, encoded as 0) or a string would widen the filter
  // silently — a bounded replay replayed every dead run of the queue.
  const ms = (field: string, v: Date | number | undefined): number => (v === undefined || v === null ? 0 : instantMs(field, v));
  return {
    queue: input.queue ?? '',
    jobId: input.jobId ?? '',
    sinceMs: ms('since', input.since),
    untilMs: ms('until', input.until),
    errorContains: input.errorContains ?? '',
    pageSize: wholeNumber('pageSize', input.pageSize),
    pageToken: input.pageToken ?? '',
  };
}
