/**
 * Queue depth by status, read through the public API (ListQueues for the
 * queue names, ListRuns per queue and status). The API has no count call,
 * so each count is one page of runs: at most LIVE_CAP for the statuses an
 * operator watches (scheduled, buffered, in flight, dead), TERMINAL_CAP for
 * history (completed, failed, cancelled); a count at its cap is shown as
 * "≥ cap" (`capped`). The scheduled runs of that page also give the "due in
 * the next minutes" histogram.
 *
 * Cost: these reads are served and decoded in the daemon's own process, on
 * the event loop that fires runs, so they are kept small and shared: one
 * read per CACHE_MS whatever the number of open consoles, queue names
 * re-read every NAMES_CACHE_MS.
 */
import type { QueueLimitsInfo, RunStatusName, TimelaneClient } from '@timelane/client';

/** Most runs counted for a live status (and read for the due-soon histogram). */
export const LIVE_CAP = 1000;
/** Most runs counted for a finished status. */
export const TERMINAL_CAP = 100;
/** Most queues shown and counted (each costs 7 ListRuns pages a refresh); past it the list says it is partial. */
export const MAX_QUEUES = 200;
const CACHE_MS = 5_000;
const NAMES_CACHE_MS = 30_000;

export const DEPTH_STATUSES = ['scheduled', 'buffered', 'fired', 'completed', 'failed', 'dead', 'cancelled'] as const satisfies readonly RunStatusName[];
export type DepthStatus = (typeof DEPTH_STATUSES)[number];
const TERMINAL: readonly DepthStatus[] = ['completed', 'failed', 'cancelled'];
export const capOf = (status: DepthStatus): number => (TERMINAL.includes(status) ? TERMINAL_CAP : LIVE_CAP);

export interface QueueRow {
  queue: string;
  /** Runs per status, at most its cap (capOf). */
  counts: Record<DepthStatus, number>;
  /** Statuses whose count reached its cap (there may be more). */
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
  /** Some queue had more scheduled runs than LIVE_CAP: the counts are a lower bound. */
  partial: boolean;
}

export interface QueueStats {
  atMs: number;
  queues: QueueRow[];
  /** Worker streams on this member subscribed to every queue ('*'). */
  allQueueStreamsHere: number;
  dueSoon: DueSoon;
  /** The cap of each status's count. */
  caps: Record<DepthStatus, number>;
  /** More than MAX_QUEUES queues: the rest are not shown (nor counted in dueSoon). */
  queuesCapped: boolean;
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
  private names: { atMs: number; value: { names: string[]; capped: boolean } } | null = null;

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
    const [known, limits] = await Promise.all([this.queueNames(now), client.listQueueLimits()]);
    const names = new Set(known.names);
    const streams = this.deps.streamsPerQueue();
    for (const l of limits) names.add(l.queue);
    // Names come from the API only, as the caller may see them: this member's
    // worker streams are not filtered by namespace, so they only add counts
    // to queues the caller already sees (by the same name), never new names.
    // (A namespaced caller sees its queues unqualified, the streams are keyed
    // `ns/queue`: its workers show as 0 here.)
    const due: DueSoon = { fromMs: now, bucketMs: DUE_BUCKET_MS, counts: new Array<number>(DUE_BUCKETS).fill(0), overdue: 0, partial: false };
    const queues: QueueRow[] = [];
    for (const queue of [...names].sort()) {
      const pages = await Promise.all(DEPTH_STATUSES.map((status) => client.listRuns({ queue, status, pageSize: capOf(status) })));
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
    const caps = Object.fromEntries(DEPTH_STATUSES.map((st) => [st, capOf(st)])) as Record<DepthStatus, number>;
    if (known.capped) due.partial = true;
    return { atMs: now, queues, allQueueStreamsHere: streams['*'] ?? 0, dueSoon: due, caps, queuesCapped: known.capped };
  }

  /** Every queue holding runs (up to MAX_QUEUES), re-read every NAMES_CACHE_MS. */
  private async queueNames(now: number): Promise<{ names: string[]; capped: boolean }> {
    if (this.names && now - this.names.atMs < NAMES_CACHE_MS) return this.names.value;
    const names: string[] = [];
    let pageToken = '';
    do {
      const page = await this.deps.client.listQueues({ pageSize: MAX_QUEUES, pageToken });
      names.push(...page.queues);
      pageToken = page.nextPageToken;
    } while (pageToken && names.length < MAX_QUEUES);
    const value = { names: names.slice(0, MAX_QUEUES), capped: pageToken !== '' || names.length > MAX_QUEUES };
    this.names = { atMs: now, value };
    return value;
  }
}
