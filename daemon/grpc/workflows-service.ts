/** Workflows RPCs: validate, call the workflow service, convert. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { WorkflowsHandlers } from '../../proto/gen/timelane/v1/Workflows.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { stepToWire, workflowRunToWire } from './workflow-convert.js';
import * as w from './workflow-input.js';

/** Wraps an async handler: result → callback, error → mapped status. */
function unary<Req, Res>(ctx: ApiContext, fn: (req: Req) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>): void => {
    // Validation throws synchronously inside fn's promise: every refusal is a status, never a crash.
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (res) => cb(null, res),
        (err: unknown) => cb(toServiceError(err, ctx.log)),
      );
  };
}

export function workflowsHandlers(ctx: ApiContext): WorkflowsHandlers {
  return {
    PutWorkflow: unary(ctx, async (req) => {
      const ns = w.namespace('namespace', req.namespace);
      const spec = w.workflowDefinition('definition', req.definition, ctx.wallNow(), ctx.limits);
      const { version, unchanged } = await ctx.workflows.put(ns, spec);
      return { name: spec.name, version, unchanged };
    }),
    StartWorkflow: unary(ctx, async (req) => {
      const what = w.startOrSchedule(req, ctx.wallNow(), ctx.limits);
      if ('start' in what) return { run: workflowRunToWire(await ctx.workflows.start(what.start)) };
      const s = what.schedule;
      await ctx.workflows.checkDefinition(s.namespace, s.name, s.version);
      const [job] = await ctx.recurring.schedule([s.job]);
      ctx.metrics.scheduled.inc(1);
      return { run: null, scheduleJobId: job.job.id };
    }),
    GetWorkflowRun: unary(ctx, async (req) => {
      const { run, steps } = await ctx.workflows.get(w.workflowRunId('id', req.id));
      return { run: workflowRunToWire(run), steps: steps.map((s) => stepToWire(s, req.includeOutputs)) };
    }),
    ListWorkflowRuns: unary(ctx, async (req) => {
      const filter = w.listFilter(req);
      const runs = await ctx.workflows.list(filter);
      const last = runs.at(-1);
      return { runs: runs.map(workflowRunToWire), nextPageToken: last && runs.length === filter.limit ? `${last.created_at_ms}:${last.id}` : '' };
    }),
    RetryWorkflowRun: unary(ctx, async (req) => {
      const { run, reset } = await ctx.workflows.retry(w.workflowRunId('id', req.id), w.stepNames('from_steps', req.fromSteps));
      return { run: workflowRunToWire(run), stepsReset: reset };
    }),
    CancelWorkflowRun: unary(ctx, async (req) => {
      const { run, cancelled, cancelling } = await ctx.workflows.cancel(w.workflowRunId('id', req.id));
      return { run: workflowRunToWire(run), runsCancelled: cancelled, runsCancelling: cancelling };
    }),
  };
}
