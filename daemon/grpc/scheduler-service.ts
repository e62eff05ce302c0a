/** Scheduler RPCs: validate, call the scheduling service, convert. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { SchedulerHandlers } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { jobToWire, runToWire } from './convert.js';
import * as v from './validate.js';
import { invalidArgument } from '../errors.js';
import type { Scheduled } from '../scheduling/scheduling-service.js';
import type { ScheduleResponse } from '../../proto/gen/timelane/v1/ScheduleResponse.js';
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

const scheduledToWire = (s: Scheduled): ScheduleResponse => ({ job: jobToWire(s.job), run: runToWire(s.run), deduplicated: s.deduplicated });

const MAX_BATCH = 1000;

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
      const input = v.scheduleInput(req, ctx.wallNow(), ctx.limits);
      const [res] = await ctx.scheduling.schedule([input]);
      ctx.metrics.scheduled.inc(res.deduplicated ? 0 : 1);
      return scheduledToWire(res);
    }),
    ScheduleBatch: unary(ctx, async (req) => {
      const n = req.requests.length;
      if (n === 0 || n > MAX_BATCH) throw invalidArgument('requests', `must hold 1..${MAX_BATCH} requests (got ${n})`);
      const now = ctx.wallNow();
      const inputs = req.requests.map((r, i) => v.scheduleInput(r, now, ctx.limits, `requests[${i}].`));
      const results = await ctx.scheduling.schedule(inputs);
      ctx.metrics.scheduled.inc(results.filter((r) => !r.deduplicated).length);
      return { results: results.map(scheduledToWire) };
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
