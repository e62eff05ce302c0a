/**
 * Workflows RPCs: validate, call the workflow service, convert. A caller bound
 * to a namespace defines, starts and sees its own namespace's workflows only,
 * and its steps' queues are its own (tenancy.ts).
 */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { WorkflowsHandlers } from '../../proto/gen/timelane/v1/Workflows.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { stepToWire, workflowRunToWire } from './workflow-convert.js';
import * as w from './workflow-input.js';
import { notFound } from '../errors.js';
import { API_DEADLINE_MS, withServerDeadline } from './server-deadline.js';
import { qualifyQueue, readNamespace, tenantOf, unqualifyAnswer, writeNamespace, type Tenant } from './tenancy.js';
import type { WorkflowSpec } from '../workflows/definition.js';

/** Wraps an async handler: result → callback, error → mapped status; queue names as the caller knows them. */
function unary<Req, Res>(ctx: ApiContext, fn: (req: Req, t: Tenant) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, done: sendUnaryData<Res>): void => {
    const cb = withServerDeadline(call, done, API_DEADLINE_MS);
    const t = tenantOf(call);
    // Validation throws synchronously inside fn's promise: every refusal is a status, never a crash.
    Promise.resolve()
      .then(() => fn(call.request, t))
      .then(
        (res) => cb(null, unqualifyAnswer(t, res)),
        (err: unknown) => cb(toServiceError(err, ctx.log)),
      );
  };
}

/** A definition's step queues, as the caller's own. */
function tenantSpec(t: Tenant, spec: WorkflowSpec): WorkflowSpec {
  return t === null ? spec : { ...spec, steps: spec.steps.map((s) => ({ ...s, queue: qualifyQueue(t, s.queue) })) };
}

export function workflowsHandlers(ctx: ApiContext): WorkflowsHandlers {
  /** The workflow run, if the caller may see it (else NOT_FOUND). */
  const ownedRun = async (t: Tenant, id: string) => {
    const r = await ctx.workflows.get(id);
    if (t !== null && r.run.namespace !== t) throw notFound(`workflow run ${id}`);
    return r;
  };
  return {
    PutWorkflow: unary(ctx, async (req, t) => {
      const ns = writeNamespace(t, w.namespace('namespace', req.namespace), 'namespace');
      const spec = tenantSpec(t, w.workflowDefinition('definition', req.definition, ctx.wallNow(), ctx.limits));
      const { version, unchanged } = await ctx.workflows.put(ns, spec);
      return { name: spec.name, version, unchanged };
    }),
    StartWorkflow: unary(ctx, async (req, t) => {
      const ns = writeNamespace(t, req.namespace === 'default' ? '' : req.namespace, 'namespace');
      const what = w.startOrSchedule({ ...req, namespace: ns }, ctx.wallNow(), ctx.limits);
      if ('start' in what) {
        const d = what.start.definition;
        const start = 'inline' in d ? { ...what.start, definition: { inline: tenantSpec(t, d.inline) } } : what.start;
        return { run: workflowRunToWire(await ctx.workflows.start(start)) };
      }
      const s = what.schedule;
      await ctx.workflows.checkDefinition(s.namespace, s.name, s.version);
      const [job] = await ctx.recurring.schedule([s.job]);
      ctx.metrics.scheduled.inc(1);
      return { run: null, scheduleJobId: job.job.id };
    }),
    StartWorkflows: unary(ctx, async (req, t) => {
      const inputs = w.startInputs(req.starts, ctx.wallNow(), ctx.limits, (ns, field) => writeNamespace(t, ns === 'default' ? '' : ns, field));
      const runs = await ctx.workflows.startMany(
        inputs.map((s) => ('inline' in s.definition ? { ...s, definition: { inline: tenantSpec(t, s.definition.inline) } } : s)),
      );
      return { runs: runs.map(workflowRunToWire) };
    }),
    GetWorkflowRun: unary(ctx, async (req, t) => {
      const { run, steps } = await ownedRun(t, w.workflowRunId('id', req.id));
      return { run: workflowRunToWire(run), steps: steps.map((s) => stepToWire(s, req.includeOutputs)) };
    }),
    ListWorkflowRuns: unary(ctx, async (req, t) => {
      const f = w.listFilter(req);
      const filter = { ...f, namespace: readNamespace(t, f.namespace, 'namespace') };
      const runs = await ctx.workflows.list(filter);
      const last = runs.at(-1);
      return { runs: runs.map(workflowRunToWire), nextPageToken: last && runs.length === filter.limit ? `${last.created_at_ms}:${last.id}` : '' };
    }),
    RetryWorkflowRun: unary(ctx, async (req, t) => {
      const id = w.workflowRunId('id', req.id);
      await ownedRun(t, id);
      const { run, reset } = await ctx.workflows.retry(id, w.stepNames('from_steps', req.fromSteps));
      return { run: workflowRunToWire(run), stepsReset: reset };
    }),
    CancelWorkflowRun: unary(ctx, async (req, t) => {
      const id = w.workflowRunId('id', req.id);
      await ownedRun(t, id);
      const { run, cancelled, cancelling } = await ctx.workflows.cancel(id);
      return { run: workflowRunToWire(run), runsCancelled: cancelled, runsCancelling: cancelling };
    }),
  };
}
