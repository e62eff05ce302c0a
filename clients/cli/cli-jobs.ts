/**
 * The CLI's commands for recurring jobs (creating one is `schedule --cron`
 * or `schedule --every`; showing one is `get`, alias `job`):
 *
 *   jobs       list jobs: id, kind, queue, status, rule, next fire
 *   pause      hold a recurring job (its made, unfired occurrences are taken back)
 *   resume     release it (--catch-up: the occurrences it missed fire by its catch-up policy)
 *   trigger    one extra run now (--force: even while one runs)
 *   backfill   make a past range's occurrences into runs that fire now
 */
import { Command, Option } from 'commander';
import { type ConnectionOptions, connectionOptions, epochArg, intInArg, nonNegativeIntArg, out, withClient } from './cli-common.js';
import { isoRelative, toJson } from './format.js';
import { jobsTable } from './recurring-format.js';
import type { BackfillResult, JobKindName, JobStatusName } from '@timelane/client';
import type { TimelaneClient } from '@timelane/client';
import { progress } from './cli-progress.js';

/** A backfill is made in at most this many time slices (one transaction each), showing progress between them. */
const BACKFILL_SLICES = 20;

/**
 * Backfills (from, to] with progress: counts the range first (a dry run,
 * refused whole if it holds more than `max`), then makes it in consecutive
 * time slices, oldest first. Each slice's runs are due 1 ms apart from the
 * moment it is made, so a large range's slices may overlap by some ms: the
 * order holds within a slice, roughly across them (one BackfillJob call —
 * the client's backfillJob — keeps it strictly). Each occurrence is made at
 * most once, so a repeat after an interruption only makes what is missing.
 */
async function backfillWithProgress(client: TimelaneClient, jobId: string, from: number, to: number, max: number | undefined, quiet: boolean): Promise<BackfillResult> {
  const { occurrences } = await client.backfillJob(jobId, { from, to, maxRuns: max, dryRun: true });
  const total: BackfillResult = { created: 0, alreadyExisted: 0, occurrences };
  if (occurrences === 0) return total;
  const slices = Math.max(1, Math.min(BACKFILL_SLICES, occurrences, to - from));
  const bar = progress(`backfill ${jobId}`, { quiet });
  try {
    bar.update(0, occurrences, 'occurrences');
    let start = from;
    for (let k = 1; k <= slices; k++) {
      const end = k === slices ? to : from + Math.floor(((to - from) * k) / slices);
      if (end <= start) continue;
      const res = await client.backfillJob(jobId, { from: start, to: end, maxRuns: 10_000 });
      total.created += res.created;
      total.alreadyExisted += res.alreadyExisted;
      bar.update(Math.min(occurrences, total.created + total.alreadyExisted), occurrences, 'occurrences');
      start = end;
    }
  } finally {
    bar.stop();
  }
  return total;
}

interface JobsOptions extends ConnectionOptions {
  queue?: string;
  kind?: Exclude<JobKindName, 'unspecified'>;
  status?: Exclude<JobStatusName, 'unspecified'>;
  namespace?: string;
  limit?: number;
  pageToken?: string;
}

interface PauseOptions extends ConnectionOptions {
  note?: string;
}

interface ResumeOptions extends ConnectionOptions {
  catchUp?: boolean;
}

interface TriggerOptions extends ConnectionOptions {
  force?: boolean;
}

interface BackfillOptions extends ConnectionOptions {
  from: number;
  to: number;
  max?: number;
}

const KINDS = ['cron', 'interval', 'once'];
const JOB_STATUSES = ['active', 'paused', 'completed', 'dead', 'cancelled'];

export function registerJobCommands(program: Command): void {
  connectionOptions(program.command('jobs'))
    .description('list jobs, by id: kind, queue, status, rule, next fire')
    .option('--queue <queue>', 'only this queue')
    .addOption(new Option('--kind <kind>', 'only this kind').choices(KINDS))
    .addOption(new Option('--status <status>', 'only this status').choices(JOB_STATUSES))
    .option('--namespace <ns>', 'only this namespace')
    .option('--limit <n>', 'page size (1..1000, default 100)', intInArg(1, 1000))
    .option('--page-token <token>', 'continue a previous listing')
    .action((opts: JobsOptions) =>
      withClient(opts, async (client) => {
        const page = await client.listJobs({
          queue: opts.queue,
          kind: opts.kind,
          status: opts.status,
          namespace: opts.namespace,
          pageSize: opts.limit,
          pageToken: opts.pageToken,
        });
        if (opts.json) return out(toJson(page));
        out(jobsTable(page.jobs));
        if (page.nextPageToken) process.stderr.write(`more: --page-token ${page.nextPageToken}\n`);
      }),
    );

  connectionOptions(program.command('pause <jobId>'))
    .description('hold a recurring job: no occurrence is made until resume')
    .option('--note <text>', 'why (kept on the job, at most 1024 chars)')
    .action((jobId: string, opts: PauseOptions) =>
      withClient(opts, async (client) => {
        const res = await client.pauseJob(jobId, opts.note);
        if (opts.json) return out(toJson(res));
        out(`job ${res.job.id}: ${res.job.status}, runs withdrawn: ${res.runsWithdrawn}`);
      }),
    );

  connectionOptions(program.command('resume <jobId>'))
    .description('release a paused job from the next occurrence after now')
    .option('--catch-up', 'fire the occurrences missed while paused, by the catch-up policy of the job')
    .action((jobId: string, opts: ResumeOptions) =>
      withClient(opts, async (client) => {
        const job = await client.resumeJob(jobId, { catchUp: opts.catchUp });
        if (opts.json) return out(toJson(job));
        out(`job ${job.id}: ${job.status}, next fire ${isoRelative(job.nextFireAtMs)}`);
      }),
    );

  connectionOptions(program.command('trigger <jobId>'))
    .description('fire a recurring job once now, outside its rule')
    .option('--force', 'fire even if a run of the job is running (ignores the overlap policy)')
    .action((jobId: string, opts: TriggerOptions) =>
      withClient(opts, async (client) => {
        const run = await client.triggerJob(jobId, { overrideOverlap: opts.force });
        if (opts.json) return out(toJson(run));
        out(`run ${run.id} of job ${run.jobId}: ${run.status}, due ${isoRelative(run.dueAtMs)} (${run.origin || 'trigger'})`);
      }),
    );

  connectionOptions(program.command('backfill <jobId>'))
    .description("make a past range's occurrences into runs that fire now (one already made is not made again)")
    .requiredOption('--from <iso|ms>', 'start of the range (exclusive)', epochArg)
    .requiredOption('--to <iso|ms>', 'end of the range (inclusive), not after now', epochArg)
    .option('--max <n>', 'refuse a range with more occurrences than this (default 1000, at most 10000)', nonNegativeIntArg)
    .action((jobId: string, opts: BackfillOptions) =>
      withClient(opts, async (client) => {
        const res = await backfillWithProgress(client, jobId, opts.from, opts.to, opts.max, opts.json === true);
        if (opts.json) return out(toJson(res));
        out(`job ${jobId}: ${res.created} run${res.created === 1 ? '' : 's'} created, ${res.alreadyExisted} already existed`);
      }),
    );
}
