/** Scheduler RPCs: validate, call the scheduling service, convert. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { SchedulerHandlers } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { countsToWire, jobToWire, newJobToWire, newRunToWire, runToWire, scheduledToWire } from './convert.js';
import * as v from './validate.js';
import type { ScheduledRef } from '../../proto/gen/timelane/v1/ScheduledRef.js';
import { ReadGate, readGateLimits } from './read-gate.js';
import { invalidArgument, notFound } from '../errors.js';
import { WORKFLOW_START_QUEUE } from '../workflows/scheduled-starts.js';
import { API_DEADLINE_MS, withServerDeadline } from './server-deadline.js';
import { callerQueue, ownJob, qualifyQueue, readNamespace, tenantOf, unqualifyAnswer, unqualifyQueue, writeNamespace, type Tenant } from './tenancy.js';
import { serveTraced } from '../tracing/run-tracing.js';
import type { TraceContext } from '../tracing/trace-context.js';
import type { Attributes } from '@opentelemetry/api';
import type { ScheduleResponse } from '../../proto/gen/timelane/v1/ScheduleResponse.js';
import type { ScheduleBatchResponse } from '../../proto/gen/timelane/v1/ScheduleBatchResponse.js';

/**
 * Wraps an async handler: result → callback, error → mapped status. The
 * handler gets the caller's namespace; queue names in its answer are given
 * back as the caller named them (tenancy.ts).
 */
function unary<Req, Res>(ctx: ApiContext, fn: (req: Req, call: ServerUnaryCall<Req, Res>, t: Tenant) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, done: sendUnaryData<Res>): void => {
    const cb = withServerDeadline(call, done, API_DEADLINE_MS);
    const t = tenantOf(call);
    fn(call.request, call, t).then(
      (res) => cb(null, unqualifyAnswer(t, res)),
      (err: unknown) => cb(toServiceError(err, ctx.log)),
    );
  };
}

/**
 * A handler that makes runs: it gets the trace context they carry (the
 * client's, from the call's metadata, or the call's span when the daemon
 * exports traces; see tracing/run-tracing.ts).
 */
function traced<Req, Res>(
  ctx: ApiContext,
  method: string,
  describe: (res: Res) => Attributes,
  fn: (req: Req, call: ServerUnaryCall<Req, Res>, t: Tenant, trace: TraceContext | null) => Promise<Res>,
) {
  return (req: Req, call: ServerUnaryCall<Req, Res>, t: Tenant): Promise<Res> =>
    serveTraced(ctx.tracing, method, call.metadata, (trace) => fn(req, call, t, trace), describe);
}

const scheduleAttributes = (res: ScheduleResponse): Attributes => ({
  'timelane.job.id': res.job?.id ?? '',
  'timelane.run.id': res.run?.id ?? '',
  'timelane.queue': res.job?.queue ?? '',
  'timelane.deduplicated': res.deduplicated ?? false,
});

const batchAttributes = (res: ScheduleBatchResponse): Attributes => ({
  'timelane.batch.size': res.scheduled?.length ?? 0,
  'timelane.batch.replayed': res.replayed ?? false,
});

/** Aborts when the call is cancelled (client gone, deadline passed). */
function cancelSignal(call: ServerUnaryCall<unknown, unknown>): AbortSignal {
  const ac = new AbortController();
  if (call.cancelled) ac.abort();
  else call.once('cancelled', () => ac.abort());
  return ac.signal;
}

/** A schedule request as this caller may make it: its own namespace, its own queues, within the namespace's quotas. */
function tenantInput<I extends { namespace: string; queue: string }>(t: Tenant, input: I, field: string): I {
  if (t === null) return input;
  return { ...input, namespace: writeNamespace(t, input.namespace === 'default' ? '' : input.namespace, field), queue: qualifyQueue(t, input.queue) };
}

export function schedulerHandlers(ctx: ApiContext): SchedulerHandlers {
  /** The job, if the caller may see it (else NOT_FOUND). */
  const ownedJob = async (t: Tenant, id: string) => {
    const r = await ctx.scheduling.getJob(id);
    ownJob(t, r.job, `job ${id}`);
    return r;
  };
  const checkJob = async (t: Tenant, id: string): Promise<string> => {
    if (t !== null) await ownedJob(t, id);
    return id;
  };
  const checkRuns = async (t: Tenant, ids: readonly number[]): Promise<void> => {
    if (t === null || ids.length === 0) return;
    const ns = await ctx.scheduling.namespacesOfRuns(ids);
    const foreign = ids.find((id) => ns.get(id) !== t);
    if (foreign !== undefined) throw notFound(`run ${foreign}`);
  };

  // Page reads hold at most half the API pool: a read storm cannot starve ingest.
  const listGate = new ReadGate({ what: 'ListRuns', ...readGateLimits(ctx.db.options.max ?? 10) });
  return {
    Schedule: unary(ctx, traced(ctx, 'Schedule', scheduleAttributes, async (req, _call, t, trace) => {
      const now = ctx.wallNow();
      const input = tenantInput(t, v.scheduleInput(req, now, ctx.limits), 'namespace');
      await ctx.quotas.admit([input], now);
      if (input.recurrence) {
        const [r] = await ctx.recurring.schedule([{ ...input, recurrence: input.recurrence }]);
        if (!r.deduplicated) ctx.metrics.scheduled.inc(1);
        const { job } = await ctx.scheduling.getJob(r.job.id);
        const run = r.run ? await ctx.scheduling.getRun(r.run.id) : null;
        return { job: jobToWire(job), run: run ? runToWire(run) : null, deduplicated: r.deduplicated };
      }
      const [s] = await ctx.scheduling.schedule([input], trace, () => '');
      if (!s.deduplicated) {
        ctx.metrics.scheduled.inc(1);
        return { job: newJobToWire(s, input, now), run: newRunToWire(s, input.queue), deduplicated: false };
      }
      const { job, runs } = await ctx.scheduling.getJob(s.job.id);
      return { job: jobToWire(job), run: runToWire(runs[0]), deduplicated: true };
    })),
    // Replies with references only (ids, shard, due time, status): never the
    // payloads, so a committed batch cannot fail on the caller's receive limit.
    ScheduleBatch: unary(ctx, traced(ctx, 'ScheduleBatch', batchAttributes, async (req, _call, t, trace) => {
      const now = ctx.wallNow();
      const batch = v.scheduleBatch(req, now, ctx.limits);
      const batchId = batch.batchId;
      const inputs = batch.inputs.map((i, k) => tenantInput(t, i, `requests[${k}].namespace`));
      if (batchId) v.oneBatchNamespace(inputs);
      await ctx.quotas.admit(inputs, now);
      const recurring = inputs.flatMap((i) => (i.recurrence ? [{ ...i, recurrence: i.recurrence }] : []));
      const { scheduled, replayed } =
        recurring.length > 0 ? { scheduled: await ctx.recurring.schedule(recurring), replayed: false } : await ctx.scheduling.scheduleBatch(inputs, batchId, trace);
      const wire = new Array<ScheduledRef>(scheduled.length);
      let created = 0;
      for (let k = 0; k < scheduled.length; k++) {
        wire[k] = scheduledToWire(scheduled[k]);
        if (!scheduled[k].deduplicated) created++;
      }
      if (!replayed) ctx.metrics.scheduled.inc(created);
      return { scheduled: wire, replayed };
    })),
    GetJob: unary(ctx, async (req, _call, t) => {
      const id = v.jobId('job_id', req.jobId);
      const { job, runs } = await ownedJob(t, id);
      if (job.kind === 'once') return { job: jobToWire(job), runs: runs.map(runToWire) };
      const d = await ctx.recurring.detail(id, job);
      return { job: jobToWire(job), runs: d.runs.map(runToWire), nextFireTimesMs: d.nextFireTimesMs.map(String), counts: countsToWire(d.counts) };
    }),
    ListJobs: unary(ctx, async (req, call, t) => {
      const limit = v.pageSize('page_size', req.pageSize);
      const filter = {
        queue: req.queue ? callerQueue(t, 'queue', req.queue) : null,
        kind: v.jobKindFilter('kind', req.kind),
        status: v.jobStatusFilter('status', req.status),
        namespace: readNamespace(t, v.namespaceFilter('namespace', req.namespace), 'namespace'),
        afterId: v.jobPageToken('page_token', req.pageToken),
        limit,
      };
      const jobs = await listGate.run(() => ctx.recurring.listJobs(filter), cancelSignal(call));
      return { jobs: jobs.map(jobToWire), nextPageToken: jobs.length === limit ? jobs[jobs.length - 1].id : '' };
    }),
    PauseJob: unary(ctx, async (req, _call, t) => {
      const id = await checkJob(t, v.jobId('job_id', req.jobId));
      const { job, withdrawn } = await ctx.recurring.pause(id, v.noteText('note', req.note, 1024));
      return { job: jobToWire(job), runsWithdrawn: withdrawn };
    }),
    ResumeJob: unary(ctx, async (req, _call, t) => ({ job: jobToWire(await ctx.recurring.resume(await checkJob(t, v.jobId('job_id', req.jobId)), req.catchUp)) })),
    UpdateJob: unary(ctx, async (req, _call, t) => {
      const id = await checkJob(t, v.jobId('job_id', req.jobId));
      // A scheduled workflow start's payload says which workflow it starts: StartWorkflow sets it, nothing else.
      if (req._payload === 'payload' && (await ctx.scheduling.getJob(id)).job.queue === WORKFLOW_START_QUEUE)
        throw invalidArgument('payload', 'a scheduled workflow start cannot be given a payload (start another schedule with StartWorkflow)');
      return { job: jobToWire(await ctx.recurring.update(id, v.jobUpdate(req, ctx.wallNow(), ctx.limits))) };
    }),
    TriggerJob: unary(ctx, async (req, _call, t) => ({ run: runToWire(await ctx.recurring.trigger(await checkJob(t, v.jobId('job_id', req.jobId)), req.overrideOverlap)) })),
    BackfillJob: unary(ctx, async (req, _call, t) => {
      const id = await checkJob(t, v.jobId('job_id', req.jobId));
      const range = v.backfillRange(req.fromMs, req.toMs, req.maxRuns, ctx.wallNow());
      const { created, existed, occurrences } = await ctx.recurring.backfill(id, range.fromMs, range.toMs, range.maxRuns, req.dryRun);
      return { created, alreadyExisted: existed, occurrences };
    }),
    GetRun: unary(ctx, async (req, _call, t) => {
      const id = v.runId('run_id', req.runId);
      await checkRuns(t, [id]);
      const run = await ctx.scheduling.getRun(id);
      return { run: runToWire(run), attempts: (await ctx.scheduling.attempts(run)).map(runToWire) };
    }),
    ListDeadRuns: unary(ctx, async (req, call, t) => {
      const f = v.deadRunsFilter('', req, v.pageSize('page_size', req.pageSize));
      const filter = { ...f, queue: req.queue ? callerQueue(t, 'queue', req.queue) : null, namespace: t };
      const runs = await listGate.run(() => ctx.scheduling.listDeadRuns(filter), cancelSignal(call));
      const last = runs.at(-1);
      return { runs: runs.map(runToWire), nextPageToken: last && runs.length === filter.limit ? `${last.finished_at_ms}:${last.id}` : '' };
    }),
    ReplayRuns: unary(ctx, async (req, _call, t) => {
      const sel = v.replaySelection(req);
      if ('ids' in sel) await checkRuns(t, sel.ids);
      else sel.filter = { ...sel.filter, queue: req.filter?.queue ? callerQueue(t, 'filter.queue', req.filter.queue) : null, namespace: t };
      const { replayed, skipped } = await ctx.scheduling.replayRuns(sel);
      return {
        replayed: replayed.map((r) => ({ deadRunId: String(r.deadRunId), newRunId: String(r.newRunId) })),
        skippedRunIds: skipped.map(String),
      };
    }),
    ListRuns: unary(ctx, async (req, call, t) => {
      const limit = v.pageSize('page_size', req.pageSize);
      const filter = {
        jobId: req.jobId ? v.jobId('job_id', req.jobId) : null,
        queue: req.queue ? callerQueue(t, 'queue', req.queue) : null,
        status: v.runStatusFilter('status', req.status),
        afterId: v.pageToken('page_token', req.pageToken),
        ...v.dueRange(req),
        limit,
        namespace: t,
      };
      const runs = await listGate.run(() => ctx.scheduling.listRuns(filter), cancelSignal(call));
      return { runs: runs.map(runToWire), nextPageToken: runs.length === limit ? String(runs[runs.length - 1].id) : '' };
    }),
    ListQueues: unary(ctx, async (req, call, t) => {
      const limit = v.pageSize('page_size', req.pageSize);
      const prefix = qualifyQueue(t, '');
      // A token is the last queue name of a page, as the caller names it: checked as one (no NUL reaches SQL).
      const after = req.pageToken ? callerQueue(t, 'page_token', req.pageToken) : '';
      const queues = await listGate.run(() => ctx.scheduling.listQueues(after, prefix, limit), cancelSignal(call));
      const names = queues.map((q) => unqualifyQueue(t, q));
      return { queues: names, nextPageToken: names.length === limit ? names[names.length - 1] : '' };
    }),
    CancelJob: unary(ctx, async (req, _call, t) => {
      const id = await checkJob(t, v.jobId('job_id', req.jobId));
      const { job, runsCancelled, runsCancelling } = await ctx.scheduling.cancelJob(id, (runId) => ctx.forgetRun(runId));
      return { job: jobToWire(job), runsCancelled, runsCancelling };
    }),
    RescheduleJob: unary(ctx, async (req, _call, t) => {
      const id = await checkJob(t, v.jobId('job_id', req.jobId));
      const due = v.dueTime('', req, ctx.wallNow(), 'at_ms, delay_ms or now');
      return { run: runToWire(await ctx.scheduling.rescheduleJob(id, due)) };
    }),
  };
}
