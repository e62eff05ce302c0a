/**
 * Queue depth by status, read through the public API (ListJobs for the
 * queue names, ListRuns per queue and status). The API has no count call,
 * so each count is one page of at most COUNT_CAP runs: a count at the cap
 * is shown as "≥ cap" (`capped`). The scheduled runs of that page also give
 * the "due in the next minutes" histogram.
 *
 * Owns a 2-second cache so that several open consoles cost one read.
 */
import type { TimelaneClient } from '../../clients/client.js';
import type { QueueLimitsInfo, RunStatusName } from '../../clients/types.js';

export const COUNT_CAP = 1000;
/** Jobs read to learn queue names (ListJobs pages of 1000). */
const MAX_JOB_PAGES = 5;
const CACHE_MS = 2_000;

export const DEPTH_STATUSES = ['scheduled', 'buffered', 'fired', 'completed', 'failed', 'dead', 'cancelled'] as const satisfies readonly RunStatusName[];
export type DepthStatus = (typeof DEPTH_STATUSES)[number];

export interface QueueRow {
  queue: string;
  /** Runs per status, at most COUNT_CAP each. */
  counts: Record<DepthStatus, number>;
  /** Statuses whose count reached COUNT_CAP (there may be more). */
  capped: DepthStatus[];
  limits: QueueLimitsInfo | null;
  /** Worker streams subscribed to it on the member serving the console. */
  workerStreamsHere: number;
}

export interface DueSoon {
  fromMs: number;
  bucketMs: number;
  /** Scheduled runs due in each bucket after fromMs. */
  counts: number[];
  /** Scheduled runs whose due time has passed (not yet fired). */
  overdue: number;
  /** Some queue had more scheduled runs than COUNT_CAP: the counts are a lower bound. */
  partial: boolean;
}

export interface QueueStats {
  atMs: number;
  queues: QueueRow[];
  /** Worker streams on this member subscribed to every queue ('*'). */
  allQueueStreamsHere: number;
  dueSoon: DueSoon;
  countCap: number;
}

export interface QueueStatsDeps {
  client: TimelaneClient;
  streamsPerQueue: () => Record<string, number>;
  now: () => number;
}

const DUE_BUCKETS = 10;
const DUE_BUCKET_MS = 60_000;

export class QueueStatsReader {
  private cached: { atMs: number; value: Promise<QueueStats> } | null = null;

  constructor(private readonly deps: QueueStatsDeps) {}

  read(): Promise<QueueStats> {
    const now = this.deps.now();
    if (this.cached && now - this.cached.atMs < CACHE_MS) return this.cached.value;
    const value = this.load(now);
    this.cached = { atMs: now, value };
    value.catch(() => (this.cached = null));
    return value;
  }

  private async load(now: number): Promise<QueueStats> {
    const { client } = this.deps;
    const [names, limits] = await Promise.all([this.queueNames(), client.listQueueLimits()]);
    const streams = this.deps.streamsPerQueue();
    for (const l of limits) names.add(l.queue);
    for (const q of Object.keys(streams)) if (q !== '*') names.add(q);
    const due: DueSoon = { fromMs: now, bucketMs: DUE_BUCKET_MS, counts: new Array<number>(DUE_BUCKETS).fill(0), overdue: 0, partial: false };
    const queues: QueueRow[] = [];
    for (const queue of [...names].sort()) {
      const pages = await Promise.all(DEPTH_STATUSES.map((status) => client.listRuns({ queue, status, pageSize: COUNT_CAP })));
      const counts = {} as Record<DepthStatus, number>;
      const capped: DepthStatus[] = [];
      DEPTH_STATUSES.forEach((status, i) => {
        counts[status] = pages[i].runs.length;
        if (pages[i].nextPageToken) capped.push(status);
      });
      for (const run of pages[DEPTH_STATUSES.indexOf('scheduled')].runs) {
        if (run.dueAtMs <= now) due.overdue++;
        else {
          const b = Math.floor((run.dueAtMs - now) / DUE_BUCKET_MS);
          if (b < DUE_BUCKETS) due.counts[b]++;
        }
      }
      if (capped.includes('scheduled')) due.partial = true;
      queues.push({ queue, counts, capped, limits: limits.find((l) => l.queue === queue) ?? null, workerStreamsHere: streams[queue] ?? 0 });
    }
    return { atMs: now, queues, allQueueStreamsHere: streams['*'] ?? 0, dueSoon: due, countCap: COUNT_CAP };
  }

  private async queueNames(): Promise<Set<string>> {
    const names = new Set<string>();
    let pageToken = '';
    for (let page = 0; page < MAX_JOB_PAGES; page++) {
      const res = await this.deps.client.listJobs({ pageSize: 1000, pageToken });
      for (const j of res.jobs) names.add(j.queue);
      if (!res.nextPageToken) break;
      pageToken = res.nextPageToken;
    }
    return names;
  }
}
