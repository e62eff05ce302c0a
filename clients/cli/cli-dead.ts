/**
 * The CLI's commands for dead letters and queue limits:
 *
 *   dead       list dead runs, newest death first (filters: queue, job, error, time)
 *   replay     replay dead runs as new runs (by id, or every one matching a filter)
 *   limits     show per-queue limits; `limits QUEUE --max-in-flight N --per-second N` sets one
 */
import type { Command } from 'commander';
import { type ConnectionOptions, connectionOptions, epochArg, intInArg, nonNegativeIntArg, out, withClient } from './cli-common.js';
import { clip, iso, table, toJson } from './format.js';
import type { TimelaneClient } from '@timelane/client';
import type { ListDeadRunsInput, ReplayResult } from '@timelane/client';
import { progress } from './cli-progress.js';

/** With filters, replay takes at most this many by default, and never more than REPLAY_MAX. */
const REPLAY_DEFAULT = 1_000;
const REPLAY_MAX = 10_000;
/** Dead runs replayed per ReplayRuns call: each call one transaction, progress between them. */
const REPLAY_CHUNK = 250;

/**
 * Replays every dead run matching `filter` (up to `max`): their ids are read
 * page by page first (newest death first), then replayed in chunks, showing
 * progress. A dead run is replayed at most once, so a repeat of the command
 * (or a run replayed meanwhile) only reports it skipped.
 */
async function replayMatching(client: TimelaneClient, filter: ListDeadRunsInput, max: number, quiet: boolean): Promise<ReplayResult> {
  const ids: string[] = [];
  let pageToken = '';
  do {
    const page = await client.listDeadRuns({ ...filter, pageSize: Math.min(1_000, max - ids.length), pageToken: pageToken || undefined });
    ids.push(...page.runs.map((r) => r.id));
    pageToken = page.nextPageToken;
  } while (pageToken && ids.length < max);
  const result: ReplayResult = { replayed: [], skippedRunIds: [] };
  const bar = progress('replay', { quiet });
  try {
    bar.update(0, ids.length, 'dead runs replayed');
    for (let i = 0; i < ids.length; i += REPLAY_CHUNK) {
      const res = await client.replayRuns({ runIds: ids.slice(i, i + REPLAY_CHUNK) });
      result.replayed.push(...res.replayed);
      result.skippedRunIds.push(...res.skippedRunIds);
      bar.update(Math.min(ids.length, i + REPLAY_CHUNK), ids.length, 'dead runs replayed');
    }
  } finally {
    bar.stop();
  }
  return result;
}

interface DeadFilterOptions extends ConnectionOptions {
  queue?: string;
  job?: string;
  error?: string;
  since?: number;
  until?: number;
}

interface DeadOptions extends DeadFilterOptions {
  limit?: number;
  pageToken?: string;
}

interface ReplayOptions extends DeadFilterOptions {
  max?: number;
}

interface LimitsSetOptions extends ConnectionOptions {
  maxInFlight?: number;
  perSecond?: number;
}

function deadFilters(cmd: Command): Command {
  return cmd
    .option('--queue <queue>', 'only this queue')
    .option('--job <jobId>', 'only this job')
    .option('--error <text>', 'only errors containing this (case-insensitive)')
    .option('--since <iso|ms>', 'died at or after', epochArg)
    .option('--until <iso|ms>', 'died before', epochArg);
}

export function registerDeadLetterCommands(program: Command): void {
  deadFilters(connectionOptions(program.command('dead')))
    .description('list dead runs (no retry left, or not retryable), newest death first')
    .option('--limit <n>', 'page size (1..1000, default 100)', intInArg(1, 1000))
    .option('--page-token <token>', 'continue a previous listing')
    .action((opts: DeadOptions) =>
      withClient(opts, async (client) => {
        const page = await client.listDeadRuns({
          queue: opts.queue,
          jobId: opts.job,
          errorContains: opts.error,
          since: opts.since,
          until: opts.until,
          pageSize: opts.limit,
          pageToken: opts.pageToken,
        });
        if (opts.json) return out(toJson(page));
        out(
          table(
            ['RUN', 'JOB', 'QUEUE', 'ATTEMPT', 'DIED', 'WORKER', 'ERROR'],
            page.runs.map((r) => [r.id, r.jobId, r.queue, String(r.attempt), iso(r.finishedAtMs), r.workerId || '-', clip(r.error, 50)]),
          ),
        );
        if (page.nextPageToken) process.stderr.write(`more: --page-token ${page.nextPageToken}\n`);
      }),
    );

  deadFilters(connectionOptions(program.command('replay [runIds...]')))
    .description('replay dead runs as new runs due now: the ids given, or every dead run matching the filters')
    .option('--max <n>', 'with filters: at most this many (default 1000, at most 10000)', nonNegativeIntArg)
    .action((runIds: string[], opts: ReplayOptions) =>
      withClient(opts, async (client) => {
        const filtered = opts.queue || opts.job || opts.error || opts.since || opts.until;
        if (runIds.length > 0 && filtered) throw new TypeError('give run ids or filters, not both');
        if (runIds.length === 0 && !filtered) throw new TypeError('give run ids, or filters (--queue, --job, --error, --since, --until)');
        if (opts.max !== undefined && opts.max > REPLAY_MAX) throw new TypeError(`--max must be at most ${REPLAY_MAX}`);
        const res =
          runIds.length > 0
            ? await client.replayRuns({ runIds })
            : await replayMatching(client, { queue: opts.queue, jobId: opts.job, errorContains: opts.error, since: opts.since, until: opts.until }, opts.max || REPLAY_DEFAULT, opts.json === true);
        if (opts.json) return out(toJson(res));
        for (const r of res.replayed) out(`run ${r.deadRunId} replayed as run ${r.newRunId}`);
        if (res.skippedRunIds.length > 0) out(`not dead, or replayed before: ${res.skippedRunIds.join(', ')}`);
        if (res.replayed.length === 0 && res.skippedRunIds.length === 0) out('no dead run matched');
      }),
    );

  connectionOptions(program.command('limits [queue]'))
    .description(
      'per-queue limits across the cluster: list them, show a queue\'s, or with flags set them (a limit not named keeps its value; 0 = none; both 0 removes them; every daemon applies a change within a second)',
    )
    .option('--max-in-flight <n>', 'most runs of the queue handed out and unanswered at once', nonNegativeIntArg)
    .option('--per-second <n>', 'most runs of the queue handed out per second', nonNegativeIntArg)
    .action((queue: string | undefined, opts: LimitsSetOptions) =>
      withClient(opts, async (client) => {
        if (queue === undefined) {
          if (opts.maxInFlight !== undefined || opts.perSecond !== undefined) throw new TypeError('name the queue to set its limits: timelane limits QUEUE --max-in-flight N --per-second N');
          const all = await client.listQueueLimits();
          if (opts.json) return out(toJson(all));
          return out(table(['QUEUE', 'MAX IN FLIGHT', 'MAX PER SECOND'], all.map((l) => [l.queue, String(l.maxInFlight || '-'), String(l.maxPerSecond || '-')])));
        }
        // A queue alone shows its limits (it removed them); a limit not named keeps its value (it was set to 0).
        const now = (await client.listQueueLimits()).find((l) => l.queue === queue) ?? { queue, maxInFlight: 0, maxPerSecond: 0 };
        const set =
          opts.maxInFlight === undefined && opts.perSecond === undefined
            ? now
            : await client.setQueueLimits({ queue, maxInFlight: opts.maxInFlight ?? now.maxInFlight, maxPerSecond: opts.perSecond ?? now.maxPerSecond });
        if (opts.json) return out(toJson(set));
        out(`queue ${set.queue}: max in flight ${set.maxInFlight || 'unlimited'}, max per second ${set.maxPerSecond || 'unlimited'}`);
      }),
    );
}
