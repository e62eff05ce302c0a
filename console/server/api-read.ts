/**
 * The JSON API's read endpoints (GET /api/…). Each answers one page of the
 * console from the public API (the same calls the CLI makes) plus, for the
 * overview, this member's sampled metrics.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { JobInfo, MemberInfo, RunInfo, RunStatusName, ShardInfo } from '@timelane/client';
import type { ApiContext, ApiRequest } from './api-context.js';
import { BadRequest } from './http-errors.js';
import type { LagHistogram, MetricsSeries, MetricsSample } from './metrics-history.js';
import { jobId, onlyKnown, optionalEnum, optionalInstant, optionalInt, optionalJobId, optionalQueue, optionalRunId, optionalString, runId } from './params.js';
import { BEFORE_LAG_MS, detectProblems, RECENT_LAG_MS, type Problem } from './problems.js';
import type { DueSoon } from './queue-stats.js';
import { LIVE_CAP } from './queue-stats.js';

const RUN_STATUSES: readonly RunStatusName[] = ['scheduled', 'fired', 'completed', 'failed', 'dead', 'cancelled', 'skipped', 'buffered', 'missed'];
const JOB_STATUSES = ['active', 'paused', 'completed', 'dead', 'cancelled'] as const;
const JOB_KINDS = ['once', 'cron', 'interval'] as const;

export interface Overview {
  memberId: string;
  atMs: number;
  minutes: number;
  series: MetricsSeries;
  lagHistogram: LagHistogram;
  /** This member's gauges (latest sample). */
  here: MetricsSample['gauges'] | null;
  shards: { total: number; unowned: number; maxOverdueMs: number };
  members: number;
  deadLetters: { count: number; capped: boolean };
  dueSoon: DueSoon;
  problems: Problem[];
}

export async function overview(ctx: ApiContext, r: ApiRequest): Promise<Overview> {
  onlyKnown(r.query, ['minutes']);
  const minutes = optionalInt(r.query, 'minutes', 1, 10) ?? 5;
  const [shards, members, dead, queues] = await Promise.all([r.client.listShards(), r.client.listMembers(), r.client.listDeadRuns({ pageSize: LIVE_CAP }), r.queues.read()]);
  const series = ctx.history.series(minutes);
  const lagHistogram = ctx.history.histogram(minutes);
  const here = ctx.history.latest()?.gauges ?? null;
  const unowned = shards.filter((s) => !s.owner).length;
  const maxOverdueMs = Math.max(0, ...shards.map((s) => s.lagMs));
  const deadLetters = { count: dead.runs.length, capped: dead.nextPageToken !== '' };
  const now = ctx.now();
  return {
    memberId: ctx.local.memberId,
    atMs: now,
    minutes,
    series,
    lagHistogram,
    here,
    shards: { total: shards.length, unowned, maxOverdueMs },
    members: members.length,
    deadLetters,
    dueSoon: queues.dueSoon,
    problems: detectProblems({
      unownedShards: unowned,
      maxOverdueMs,
      deadLetters,
      clockSkewMs: here?.clockSkewMs ?? 0,
      lagP99RecentMs: ctx.history.histogramBetween(now - RECENT_LAG_MS, now).p99Ms,
      lagP99BeforeMs: ctx.history.histogramBetween(now - RECENT_LAG_MS - BEFORE_LAG_MS, now - RECENT_LAG_MS).p99Ms,
    }),
  };
}

export interface ShardMap {
  atMs: number;
  memberId: string;
  shards: ShardInfo[];
  members: MemberInfo[];
  /** Shards whose owner is not the one the assignment wants (moves under way), cluster mode only. */
  movesPending: number;
}

export async function shardMap(ctx: ApiContext, r: ApiRequest): Promise<ShardMap> {
  onlyKnown(r.query, []);
  const [shards, members] = await Promise.all([r.client.listShards(), r.client.listMembers()]);
  const movesPending = shards.filter((s) => s.assignedTo && s.assignedTo !== s.owner).length;
  return { atMs: ctx.now(), memberId: ctx.local.memberId, shards, members, movesPending };
}

export function operations(ctx: ApiContext, r: ApiRequest): ReturnType<ApiContext['operations']['list']> {
  onlyKnown(r.query, []);
  return ctx.operations.list();
}

export function queues(_ctx: ApiContext, r: ApiRequest): ReturnType<ApiRequest['queues']['read']> {
  onlyKnown(r.query, []);
  return r.queues.read();
}

export interface RunSearch {
  runs: RunInfo[];
  nextPageToken: string;
}

export async function searchRuns(_ctx: ApiContext, r: ApiRequest): Promise<RunSearch> {
  const q = r.query;
  onlyKnown(q, ['id', 'job', 'queue', 'status', 'from', 'to', 'limit', 'pageToken']);
  const id = optionalRunId(q, 'id');
  const job = optionalJobId(q, 'job');
  const queue = optionalQueue(q, 'queue');
  const status = optionalEnum(q, 'status', RUN_STATUSES);
  const from = optionalInstant(q, 'from');
  const to = optionalInstant(q, 'to');
  const limit = optionalInt(q, 'limit', 1, 1000) ?? 100;
  const pageToken = optionalString(q, 'pageToken', 256) ?? '';
  if (from !== undefined && to !== undefined && to < from) throw new BadRequest('to', 'must not be before from');
  if (id) {
    // A run by id is one run: another filter beside it would be silently ignored.
    const other = ['job', 'queue', 'status', 'from', 'to', 'pageToken'].find((k) => (q.get(k) ?? '') !== '');
    if (other) throw new BadRequest(other, 'cannot be combined with id (a run by id is one run)');
    try {
      return { runs: [await r.client.getRun(id)], nextPageToken: '' };
    } catch (err) {
      // An unknown id is an empty search result, not an error page.
      if ((err as { code?: number }).code === GrpcStatus.NOT_FOUND) return { runs: [], nextPageToken: '' };
      throw err;
    }
  }
  // The due range is the daemon's filter: every matching run is found, and the page token continues after the last one returned.
  const res = await r.client.listRuns({ jobId: job, queue, status, dueFrom: from, dueTo: to, pageSize: limit, pageToken });
  return { runs: res.runs, nextPageToken: res.nextPageToken };
}

export interface RunHistory {
  run: RunInfo;
  /** Every attempt of its occurrence, oldest first. */
  attempts: RunInfo[];
  job: JobInfo | null;
}

export async function runHistory(_ctx: ApiContext, r: ApiRequest): Promise<RunHistory> {
  onlyKnown(r.query, []);
  const id = runId(r.params[0], 'run id');
  const { run, attempts } = await r.client.getRunWithAttempts(id);
  const job = await r.client.getJob(run.jobId).then(
    (j) => j.job,
    () => null,
  );
  return { run, attempts, job };
}

export async function listJobs(_ctx: ApiContext, r: ApiRequest): ReturnType<ApiRequest['client']['listJobs']> {
  const q = r.query;
  onlyKnown(q, ['queue', 'kind', 'status', 'limit', 'pageToken']);
  return r.client.listJobs({
    queue: optionalQueue(q, 'queue'),
    kind: optionalEnum(q, 'kind', JOB_KINDS),
    status: optionalEnum(q, 'status', JOB_STATUSES),
    pageSize: optionalInt(q, 'limit', 1, 1000) ?? 100,
    pageToken: optionalString(q, 'pageToken', 256),
  });
}

export async function getJob(_ctx: ApiContext, r: ApiRequest): ReturnType<ApiRequest['client']['getJob']> {
  onlyKnown(r.query, []);
  return r.client.getJob(jobId(r.params[0]));
}

export async function deadLetters(_ctx: ApiContext, r: ApiRequest): ReturnType<ApiRequest['client']['listDeadRuns']> {
  const q = r.query;
  onlyKnown(q, ['queue', 'job', 'error', 'since', 'until', 'limit', 'pageToken']);
  return r.client.listDeadRuns({
    queue: optionalQueue(q, 'queue'),
    jobId: optionalJobId(q, 'job'),
    errorContains: optionalString(q, 'error', 256),
    since: optionalInstant(q, 'since'),
    until: optionalInstant(q, 'until'),
    pageSize: optionalInt(q, 'limit', 1, 1000) ?? 100,
    pageToken: optionalString(q, 'pageToken', 256),
  });
}
