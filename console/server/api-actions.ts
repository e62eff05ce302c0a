/**
 * The JSON API's actions (POST /api/…): the few writes an operator makes
 * from the console, each one API call. Job actions answer when done; shard
 * moves, drains and rebalances run in the background (OperationLog) and
 * answer 202 with the operation to follow.
 */
import type { JobInfo, RunInfo, ReplayResult } from '@timelane/client';
import type { ApiContext, ApiRequest } from './api-context.js';
import { BadRequest } from './http-errors.js';
import type { OperationView } from './operations.js';
import { jobId, memberId, optionalBool, optionalInt, optionalString, runIdList } from './params.js';

/** Most dead runs replayed by one click. */
const MAX_REPLAY = 1000;
/** How long a console-started move waits for the new owner (the operation keeps the result). */
const OPS_TIMEOUT_MS = 30_000;

export async function pauseJob(_ctx: ApiContext, r: ApiRequest): Promise<{ job: JobInfo; runsWithdrawn: number }> {
  return r.client.pauseJob(jobId(r.params[0]), optionalString(r.body, 'note', 1024) ?? 'paused from the web console');
}

export async function resumeJob(_ctx: ApiContext, r: ApiRequest): Promise<{ job: JobInfo }> {
  return { job: await r.client.resumeJob(jobId(r.params[0]), { catchUp: optionalBool(r.body, 'catchUp') ?? false }) };
}

export async function triggerJob(_ctx: ApiContext, r: ApiRequest): Promise<{ run: RunInfo }> {
  return { run: await r.client.triggerJob(jobId(r.params[0]), { overrideOverlap: optionalBool(r.body, 'overrideOverlap') ?? false }) };
}

export async function replayDead(_ctx: ApiContext, r: ApiRequest): Promise<ReplayResult> {
  return r.client.replayRuns({ runIds: runIdList(r.body, 'runIds', MAX_REPLAY) });
}

/** Background work keeps the caller's client open until it ends (the request answers 202 long before). */
function held(r: ApiRequest, work: () => Promise<string>): () => Promise<string> {
  return () => {
    const release = r.hold();
    return work().finally(release);
  };
}

export function moveShard(ctx: ApiContext, r: ApiRequest): Promise<OperationView> {
  const shard = optionalInt({ shard: r.params[0] }, 'shard', 0, 65_535);
  if (shard === undefined) throw new BadRequest('shard', 'is required');
  const to = optionalString(r.body, 'toMember', 64);
  if (!to) throw new BadRequest('toMember', 'is required');
  const target = memberId(to, 'toMember');
  const client = r.client;
  return ctx.operations.start('move', `shard ${shard} → ${target}`, held(r, async () => {
    const res = await client.moveShard(shard, target, { timeoutMs: OPS_TIMEOUT_MS });
    return `moved from ${res.move.fromMember || '(no owner)'} to ${res.move.toMember} in ${Math.round(res.handoffMs)} ms`;
  }));
}

export function drainMember(ctx: ApiContext, r: ApiRequest): Promise<OperationView> {
  const member = memberId(r.params[0]);
  const undo = optionalBool(r.body, 'undo') ?? false;
  const client = r.client;
  return ctx.operations.start(undo ? 'undrain' : 'drain', `member ${member}`, held(r, async () => {
    const res = await client.drainMember(member, { undo, timeoutMs: OPS_TIMEOUT_MS });
    return `${res.moves.length} move${res.moves.length === 1 ? '' : 's'}, ${res.completed ? 'all landed' : 'some still under way at the timeout'}`;
  }));
}

export function rebalance(ctx: ApiContext, r: ApiRequest): Promise<OperationView> {
  const client = r.client;
  return ctx.operations.start('rebalance', 'cluster', held(r, async () => {
    const res = await client.rebalance({ timeoutMs: OPS_TIMEOUT_MS });
    return `${res.moves.length} move${res.moves.length === 1 ? '' : 's'}, ${res.completed ? 'all landed' : 'some still under way at the timeout'}`;
  }));
}
