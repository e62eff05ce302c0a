/** Scheduler RPCs: validate, call the scheduling service, convert. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { SchedulerHandlers } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { jobToWire, newJobToWire, newRunToWire, runToWire, scheduledToWire } from './convert.js';
import * as v from './validate.js';
import type { ScheduledRef } from '../../proto/gen/timelane/v1/ScheduledRef.js';
import { ReadGate, readGateLimits } from './read-gate.js';

/** Wraps an async handler: result → callback, error → mapped status. */
function unary<Req, Res>(ctx: ApiContext, fn: (req: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>): void => {
    fn(call.request, call).then(
      (res) => cb(null, res),
      (err: unknown) => cb(toServiceError(err, ctx.log)),
    );
  };
}

/** Aborts when the call is cancelled (client gone, deadline passed). */
function cancelSignal(call: ServerUnaryCall<unknown, unknown>): AbortSignal {
  const ac = new AbortController();
  if (call.cancelled) ac.abort();
  else call.once('cancelled', () => ac.abort());
  return ac.signal;
}

export function schedulerHandlers(ctx: ApiContext): SchedulerHandlers {
  // Page reads hold at most half the API pool: a read storm cannot starve ingest.
  const listGate = new ReadGate({ what: 'ListRuns', ...readGateLimits(ctx.db.options.max ?? 10) });
  return {
    Schedule: unary(ctx, async (req) => {
      const now = ctx.wallNow();
      const input = v.scheduleInput(req, now, ctx.limits);
      const [s] = await ctx.scheduling.schedule([input]);
      if (!s.deduplicated) {
        ctx.metrics.scheduled.inc(1);
        return { job: newJobToWire(s, input, now), run: newRunToWire(s, input.queue), deduplicated: false };
      }
      const { job, runs } = await ctx.scheduling.getJob(s.job.id);
      return { job: jobToWire(job), run: runToWire(runs[0]), deduplicated: true };
    }),
    // Replies with references only (ids, shard, due time, status): never the
    // payloads, so a committed batch cannot fail on the caller's receive limit.
    ScheduleBatch: unary(ctx, async (req) => {
      const { inputs, batchId } = v.scheduleBatch(req, ctx.wallNow(), ctx.limits);
      const { scheduled, replayed } = await ctx.scheduling.scheduleBatch(inputs, batchId);
      const wire = new Array<ScheduledRef>(scheduled.length);
      let created = 0;
      for (let k = 0; k < scheduled.length; k++) {
        wire[k] = scheduledToWire(scheduled[k]);
        if (!scheduled[k].deduplicated) created++;
      }
      if (!replayed) ctx.metrics.scheduled.inc(created);
      return { scheduled: wire, replayed };
    }),
    GetJob: unary(ctx, async (req) => {
      const { job, runs } = await ctx.scheduling.getJob(v.jobId('job_id', req.jobId));
      return { job: jobToWire(job), runs: runs.map(runToWire) };
    }),
    GetRun: unary(ctx, async (req) => ({ run: runToWire(await ctx.scheduling.getRun(v.runId('run_id', req.runId))) })),
    ListRuns: unary(ctx, async (req, call) => {
      const limit = v.pageSize('page_size', req.pageSize);
      const filter = {
        jobId: req.jobId ? v.jobId('job_id', req.jobId) : null,
        queue: req.queue ? v.queueName('queue', req.queue) : null,
        status: v.runStatusFilter('status', req.status),
        afterId: v.pageToken('page_token', req.pageToken),
        limit,
      };
      const runs = await listGate.run(() => ctx.scheduling.listRuns(filter), cancelSignal(call));
      return { runs: runs.map(runToWire), nextPageToken: runs.length === limit ? String(runs[runs.length - 1].id) : '' };
    }),
    CancelJob: unary(ctx, async (req) => {
      const { job, runsCancelled } = await ctx.scheduling.cancelJob(v.jobId('job_id', req.jobId), (runId) => ctx.forgetRun(runId));
      return { job: jobToWire(job), runsCancelled };
    }),
    RescheduleJob: unary(ctx, async (req) => {
      const id = v.jobId('job_id', req.jobId);
      const due = v.dueTime('', req, ctx.wallNow());
      return { run: runToWire(await ctx.scheduling.rescheduleJob(id, due)) };
    }),
  };
}
