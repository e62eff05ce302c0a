/**
 * Promise API over the Scheduler and Admin services. Inputs are friendly
 * (Dates, delays, JSON payloads); outputs are the plain shapes of
 * clients/types.ts. A failed call rejects with grpc-js's ServiceError itself
 * (`.code`, `.details`, `.metadata`); bad input caught before sending rejects
 * with a TypeError or RangeError.
 */
import * as grpc from '@grpc/grpc-js';
import type { CancelJobResponse__Output as CancelJobOut } from '../proto/gen/timelane/v1/CancelJobResponse.js';
import type { DrainMemberResponse__Output as DrainMemberOut } from '../proto/gen/timelane/v1/DrainMemberResponse.js';
import type { GetJobResponse__Output as GetJobOut } from '../proto/gen/timelane/v1/GetJobResponse.js';
import type { GetRunResponse__Output as GetRunOut } from '../proto/gen/timelane/v1/GetRunResponse.js';
import type { ListMembersResponse__Output as ListMembersOut } from '../proto/gen/timelane/v1/ListMembersResponse.js';
import type { ListRunsResponse__Output as ListRunsOut } from '../proto/gen/timelane/v1/ListRunsResponse.js';
import type { ListShardsResponse__Output as ListShardsOut } from '../proto/gen/timelane/v1/ListShardsResponse.js';
import type { MoveShardResponse__Output as MoveShardOut } from '../proto/gen/timelane/v1/MoveShardResponse.js';
import type { RebalanceResponse__Output as RebalanceOut } from '../proto/gen/timelane/v1/RebalanceResponse.js';
import type { RescheduleJobResponse__Output as RescheduleOut } from '../proto/gen/timelane/v1/RescheduleJobResponse.js';
import type { ScheduleBatchResponse__Output as ScheduleBatchOut } from '../proto/gen/timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleResponse__Output as ScheduleOut } from '../proto/gen/timelane/v1/ScheduleResponse.js';
import type { AdminClient } from '../proto/gen/timelane/v1/Admin.js';
import type { SchedulerClient } from '../proto/gen/timelane/v1/Scheduler.js';
import { batchScheduled, jobInfo, memberInfo, runInfo, runStatusToWire, scheduleRequest, shardInfo, shardMoveInfo, waitMs, whenFields } from './convert.js';
import { timelaneV1 } from './proto.js';
import type { ScheduleRequest } from '../proto/gen/timelane/v1/ScheduleRequest.js';
import type {
  BatchScheduled,
  CancelResult,
  DrainMemberOptions,
  DrainResult,
  JobWithRuns,
  ListRunsInput,
  MemberInfo,
  MoveShardOptions,
  MoveShardResult,
  RebalanceOptions,
  RebalanceResult,
  RescheduleInput,
  RunInfo,
  RunPage,
  ScheduleBatchOptions,
  ScheduleInput,
  ScheduleResult,
  ShardInfo,
} from './types.js';

export interface TimelaneClientOptions {
  /** Default: insecure (plaintext). */
  credentials?: grpc.ChannelCredentials;
  /** Deadline for each call, in ms. Default 30,000; 0 for none. */
  timeoutMs?: number;
}

export const DEFAULT_ADDRESS = '127.0.0.1:7070';

/** Most schedules in one scheduleBatch call (the daemon refuses more). */
export const MAX_BATCH = 1000;
/** Largest ScheduleBatch request the daemon accepts, in bytes (its gRPC receive limit). */
export const MAX_BATCH_BYTES = 64 * 1024 * 1024;
/** Encoded bytes of one request besides its payload and names (tags, due time, settings), rounded up. */
const REQUEST_OVERHEAD = 40;

type Invoke<Res> = (options: grpc.CallOptions, callback: grpc.requestCallback<Res>) => unknown;

export class TimelaneClient {
  private readonly scheduler: SchedulerClient;
  private readonly admin: AdminClient;
  private readonly timeoutMs: number;

  constructor(
    readonly address: string = DEFAULT_ADDRESS,
    opts: TimelaneClientOptions = {},
  ) {
    const pkg = timelaneV1();
    const credentials = opts.credentials ?? grpc.credentials.createInsecure();
    this.scheduler = new pkg.Scheduler(address, credentials);
    this.admin = new pkg.Admin(address, credentials, { channelOverride: this.scheduler.getChannel() });
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  async schedule(input: ScheduleInput): Promise<ScheduleResult> {
    const req = scheduleRequest(input);
    const res = await this.call<ScheduleOut>((o, cb) => this.scheduler.schedule(req, o, cb));
    return toSchedule(res);
  }

  /**
   * Schedules 1..1000 jobs in one transaction: all or none. Results are in
   * input order and hold ids, shard, due time and status, never payloads, so
   * the reply stays small (about 60 bytes per input) whatever the payloads.
   * The request must encode to at most 64 MiB (the daemon's receive limit):
   * a larger batch is refused here with a RangeError. With `batchId`, a
   * retried batch is never applied twice (see ScheduleBatchOptions).
   */
  async scheduleBatch(inputs: readonly ScheduleInput[], opts: ScheduleBatchOptions = {}): Promise<BatchScheduled[]> {
    if (inputs.length === 0 || inputs.length > MAX_BATCH) throw new RangeError(`inputs: must hold 1..${MAX_BATCH} schedules (got ${inputs.length})`);
    const requests = new Array<ScheduleRequest>(inputs.length);
    let bytes = 0;
    for (let k = 0; k < inputs.length; k++) {
      const r = scheduleRequest(inputs[k]);
      bytes += ((r.payload as Buffer | undefined)?.length ?? 0) + (r.queue?.length ?? 0) + (r.namespace?.length ?? 0) + (r.dedupeKey?.length ?? 0) + REQUEST_OVERHEAD;
      requests[k] = r;
    }
    if (bytes > MAX_BATCH_BYTES) throw new RangeError(`inputs: the batch encodes to about ${bytes} bytes, over the daemon's ${MAX_BATCH_BYTES}-byte limit; split it`);
    const req = { requests, batchId: opts.batchId ?? '' };
    const res = await this.call<ScheduleBatchOut>((o, cb) => this.scheduler.scheduleBatch(req, o, cb));
    const out = new Array<BatchScheduled>(res.scheduled.length);
    for (let k = 0; k < out.length; k++) out[k] = batchScheduled(res.scheduled[k]);
    return out;
  }

  async getJob(jobId: string): Promise<JobWithRuns> {
    const res = await this.call<GetJobOut>((o, cb) => this.scheduler.getJob({ jobId }, o, cb));
    return { job: jobInfo(res.job), runs: res.runs.map(runInfo) };
  }

  async getRun(runId: string): Promise<RunInfo> {
    const res = await this.call<GetRunOut>((o, cb) => this.scheduler.getRun({ runId }, o, cb));
    return runInfo(res.run);
  }

  async listRuns(input: ListRunsInput = {}): Promise<RunPage> {
    const req = {
      jobId: input.jobId ?? '',
      queue: input.queue ?? '',
      status: runStatusToWire(input.status),
      pageSize: input.pageSize ?? 0,
      pageToken: input.pageToken ?? '',
    };
    const res = await this.call<ListRunsOut>((o, cb) => this.scheduler.listRuns(req, o, cb));
    return { runs: res.runs.map(runInfo), nextPageToken: res.nextPageToken };
  }

  async cancelJob(jobId: string): Promise<CancelResult> {
    const res = await this.call<CancelJobOut>((o, cb) => this.scheduler.cancelJob({ jobId }, o, cb));
    return { job: jobInfo(res.job), runsCancelled: res.runsCancelled };
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
    if (!Number.isInteger(shard) || shard < 0) throw new RangeError('shard: must be a non-negative integer');
    if (!toMember) throw new TypeError('toMember: is required');
    const timeoutMs = waitMs('timeoutMs', opts.timeoutMs);
    const req = { shard, toMember, timeoutMs };
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

/** Deadline of an operator call: its server-side wait (or the server's default) plus slack for the RPC itself. */
function opsDeadline(timeoutMs: number, serverDefaultMs: number): number {
  return (timeoutMs || serverDefaultMs) + 5_000;
}

function toSchedule(res: ScheduleOut): ScheduleResult {
  return { job: jobInfo(res.job), run: runInfo(res.run), deduplicated: res.deduplicated };
}
