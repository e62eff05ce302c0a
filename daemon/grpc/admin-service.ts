/** Admin RPCs: the shard map, the member list, operator moves, and queue limits. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { AdminHandlers } from '../../proto/gen/timelane/v1/Admin.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { failedPrecondition, invalidArgument } from '../errors.js';
import type { ShardMove } from '../cluster/assignment.js';
import type { ClusterOperations } from '../cluster/operations.js';
import type { ShardMove as WireMove } from '../../proto/gen/timelane/v1/ShardMove.js';
import { queueRef } from './validate.js';
import { ADMIN_DEADLINE_MS, withServerDeadline } from './server-deadline.js';
import { tenantOf, unqualifyQueue, type Tenant } from './tenancy.js';
import { listQueueLimits, setQueueLimits } from '../dispatch/queue-limits.js';

function unary<Req, Res>(ctx: ApiContext, fn: (req: Req, t: Tenant) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, done: sendUnaryData<Res>): void => {
    const cb = withServerDeadline(call, done, ADMIN_DEADLINE_MS);
    fn(call.request, tenantOf(call)).then(
      (res) => cb(null, res),
      (err: unknown) => cb(toServiceError(err, ctx.log)),
    );
  };
}

const moveToWire = (m: ShardMove): WireMove => ({ shard: m.shard, fromMember: m.from ?? '', toMember: m.to ?? '' });

function timeout(field: string, v: number, dflt: number): number {
  if (v === 0) return dflt;
  if (v < 100 || v > 300_000) throw invalidArgument(field, 'must be 0 (default) or 100..300000');
  return v;
}

export function adminHandlers(ctx: ApiContext): AdminHandlers {
  const ops = (): ClusterOperations => {
    const o = ctx.ops();
    if (!o) throw failedPrecondition('operator moves need a cluster: start the daemons with REDIS_URL');
    return o;
  };
  return {
    ListShards: unary(ctx, async () => ({ shards: await ctx.listShards() })),
    ListMembers: unary(ctx, async () => ({ members: await ctx.listMembers() })),
    MoveShard: unary(ctx, async (req) => {
      if (!req.toMember) throw invalidArgument('to_member', 'is required');
      const { move, handoffMs } = await ops().move(req.shard, req.toMember, timeout('timeout_ms', req.timeoutMs, 10_000));
      return { move: moveToWire(move), handoffMs };
    }),
    DrainMember: unary(ctx, async (req) => {
      const { moves, completed } = await ops().drain(req.memberId, req.undo, timeout('timeout_ms', req.timeoutMs, 15_000));
      return { moves: moves.map(moveToWire), completed };
    }),
    SetQueueLimits: unary(ctx, async (req) => {
      const l = req.limits;
      if (!l) throw invalidArgument('limits', 'is required');
      const queue = queueRef('limits.queue', l.queue);
      const cap = (field: string, v: number): number => {
        if (v > 1_000_000) throw invalidArgument(field, `must be at most 1000000 (got ${v})`);
        return v;
      };
      const set = await setQueueLimits(ctx.db, queue, cap('limits.max_in_flight', l.maxInFlight), cap('limits.max_per_second', l.maxPerSecond));
      await ctx.onLimitsChanged();
      return { limits: { queue, maxInFlight: set.maxInFlight, maxPerSecond: set.maxPerSecond } };
    }),
    // A namespaced reader sees its own queues' limits, under the names it uses.
    ListQueueLimits: unary(ctx, async (_req, t) => ({
      limits: (await listQueueLimits(ctx.db))
        .filter((r) => t === null || r.queue.startsWith(`${t}/`))
        .map((r) => ({ queue: unqualifyQueue(t, r.queue), maxInFlight: r.max_in_flight, maxPerSecond: r.max_per_second })),
    })),
    Rebalance: unary(ctx, async (req) => {
      const r = await ops().rebalance(req.dryRun, timeout('timeout_ms', req.timeoutMs, 15_000));
      return { moves: r.moves.map(moveToWire), executed: r.executed, completed: r.completed, shardsPerMember: r.perMember };
    }),
  };
}
