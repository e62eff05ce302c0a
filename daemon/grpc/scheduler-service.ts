/** Scheduler RPCs: validate, call the scheduling service, convert. */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import type { SchedulerHandlers } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';
import { countsToWire, jobToWire, newJobToWire, newRunToWire, runToWire, scheduledToWire } from './convert.js';
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
      if (input.recurrence) {
        const [r] = await ctx.recurring.schedule([{ ...input, recurrence: input.recurrence }]);
        if (!r.deduplicated) ctx.metrics.scheduled.inc(1);
        const { job } = await ctx.scheduling.getJob(r.job.id);
        const run = r.run ? await ctx.scheduling.getRun(r.run.id) : null;
        return { job: jobToWire(job), run: run ? runToWire(run) : null, deduplicated: r.deduplicated };
      }
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
      const recurring = inputs.flatMap((i) => (i.recurrence ? [{ ...i, recurrence: i.recurrence }] : []));
      const { scheduled, replayed } =
        recurring.length > 0 ? { scheduled: await ctx.recurring.schedule(recurring), replayed: false } : await ctx.scheduling.scheduleBatch(inputs, batchId);
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
      const id = v.jobId('job_id', req.jobId);
      const { job, runs } = await ctx.scheduling.getJob(id);
      if (job.kind === 'once') return { job: jobToWire(job), runs: runs.map(runToWire) };
      const d = await ctx.recurring.detail(id, job);
      return { job: jobToWire(job), runs: d.runs.map(runToWire), nextFireTimesMs: d.nextFireTimesMs.map(String), counts: countsToWire(d.counts) };
    }),
    ListJobs: unary(ctx, async (req, call) => {
      const limit = v.pageSize('page_size', req.pageSize);
      const filter = {
        queue: req.queue ? v.queueName('queue', req.queue) : null,
        kind: v.jobKindFilter('kind', req.kind),
        status: v.jobStatusFilter('status', req.status),
        namespace: v.namespaceFilter('namespace', req.namespace),
        afterId: v.jobPageToken('page_token', req.pageToken),
        limit,
      };
      const jobs = await listGate.run(() => ctx.recurring.listJobs(filter), cancelSignal(call));
      return { jobs: jobs.map(jobToWire), nextPageToken: jobs.length === limit ? jobs[jobs.length - 1].id : '' };
    }),
    PauseJob: unary(ctx, async (req) => {
      const { job, withdrawn } = await ctx.recurring.pause(v.jobId('job_id', req.jobId), v.noteText('note', req.note, 1024));
      return { job: jobToWire(job), runsWithdrawn: withdrawn };
    }),
    ResumeJob: unary(ctx, async (req) => ({ job: jobToWire(await ctx.recurring.resume(v.jobId('job_id', req.jobId), req.catchUp)) })),
    UpdateJob: unary(ctx, async (req) => {
      const id = v.jobId('job_id', req.jobId);
      return { job: jobToWire(await ctx.recurring.update(id, v.jobUpdate(req, ctx.wallNow(), ctx.limits))) };
    }),
    TriggerJob: unary(ctx, async (req) => ({ run: runToWire(await ctx.recurring.trigger(v.jobId('job_id', req.jobId), req.overrideOverlap)) })),
    BackfillJob: unary(ctx, async (req) => {
      const id = v.jobId('job_id', req.jobId);
      const range = v.backfillRange(req.fromMs, req.toMs, req.maxRuns, ctx.wallNow());
      const { created, existed } = await ctx.recurring.backfill(id, range.fromMs, range.toMs, range.maxRuns);
      return { created, alreadyExisted: existed };
    }),
    GetRun: unary(ctx, async (req) => {
      const run = await ctx.scheduling.getRun(v.runId('run_id', req.runId));
      return { run: runToWire(run), attempts: (await ctx.scheduling.attempts(run)).map(runToWire) };
    }),
    ListDeadRuns: unary(ctx, async (req, call) => {
      const filter = v.deadRunsFilter('', req, v.pageSize('page_size', req.pageSize));
      const runs = await listGate.run(() => ctx.scheduling.listDeadRuns(filter), cancelSignal(call));
      const last = runs.at(-1);
      return { runs: runs.map(runToWire), nextPageToken: last && runs.length === filter.limit ? `${last.finished_at_ms}:${last.id}` : '' };
    }),
    ReplayRuns: unary(ctx, async (req) => {
      const { replayed, skipped } = await ctx.scheduling.replayRuns(v.replaySelection(req));
      return {
        replayed: replayed.map((r) => ({ deadRunId: String(r.deadRunId), newRunId: String(r.newRunId) })),
        skippedRunIds: skipped.map(String),
      };
    }),
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
      const { job, runsCancelled, runsCancelling } = await ctx.scheduling.cancelJob(v.jobId('job_id', req.jobId), (runId) => ctx.forgetRun(runId));
      return { job: jobToWire(job), runsCancelled, runsCancelling };
    }),
    RescheduleJob: unary(ctx, async (req) => {
      const id = v.jobId('job_id', req.jobId);
      const due = v.dueTime('', req, ctx.wallNow(), 'at_ms, delay_ms or now');
      return { run: runToWire(await ctx.scheduling.rescheduleJob(id, due)) };
    }),
  };
}
