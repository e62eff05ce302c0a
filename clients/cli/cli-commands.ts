/**
 * The CLI's client commands: schedule, get (alias job), run, runs, cancel,
 * reschedule. Recurring jobs: `schedule --cron/--every` (options in
 * cli-recurrence.ts), the other verbs in cli-jobs.ts; shards and members:
 * cli-ops.ts.
 */
import { Command, Option } from 'commander';
import {
  type ConnectionOptions,
  connectionOptions,
  durationArg,
  epochArg,
  instantArg,
  intArg,
  intInArg,
  out,
  withClient,
} from './cli-common.js';
import { addRecurrenceOptions, recurrenceFromOptions, type RecurrenceOptions } from './cli-recurrence.js';
import { isoRelative, jobLines, runLines, runsTable, toJson } from './format.js';
import { countsLine, fireTimesLines, occurrenceRunsTable, progressLines, recurrenceLines } from './recurring-format.js';
import type { RecurrenceInput, RunStatusName } from '@timelane/client';

interface ScheduleOptions extends ConnectionOptions, RecurrenceOptions {
  queue: string;
  in?: number;
  at?: number;
  payload?: string;
  priority?: number;
  dedupeKey?: string;
  namespace?: string;
  atMostOnce?: boolean;
  maxAttempts?: number;
  leaseMs?: number;
}

interface RunsOptions extends ConnectionOptions {
  job?: string;
  queue?: string;
  status?: RunStatusName;
  dueFrom?: number;
  dueTo?: number;
  limit?: number;
  pageToken?: string;
}

interface WhenOptions extends ConnectionOptions {
  in?: number;
  at?: number;
}

const RUN_STATUSES: RunStatusName[] = ['scheduled', 'fired', 'completed', 'failed', 'dead', 'cancelled', 'skipped', 'buffered', 'missed'];

export function registerClientCommands(program: Command): void {
  addRecurrenceOptions(
    connectionOptions(program.command('schedule'))
      .description('schedule a job: due now unless --in or --at; recurring with --cron or --every')
      .requiredOption('--queue <queue>', 'queue the run is delivered on')
      .addOption(new Option('--in <duration>', 'due after this long: 500ms, 2s, 1m, 1h').argParser(durationArg).conflicts('at'))
      .addOption(new Option('--at <iso>', 'due at this ISO-8601 instant').argParser(instantArg))
      .option('--payload <json-or-text>', 'payload, sent as UTF-8')
      .option('--priority <n>', 'higher fires first within a millisecond (-1000..1000)', intInArg(-1000, 1000))
      .option('--dedupe-key <key>', 'makes scheduling idempotent within the namespace')
      .option('--namespace <ns>', 'scope for dedupe keys')
      .option('--at-most-once', 'never redeliver (default: at least once)')
      .option('--max-attempts <n>', 'attempts including the first (1..100)', intInArg(1, 100))
      .option('--lease-ms <n>', 'lease of a delivered run in ms', intArg),
  ).action((opts: ScheduleOptions, cmd: Command) => {
    let recurrence: RecurrenceInput | undefined;
    try {
      recurrence = recurrenceFromOptions(opts);
    } catch (err) {
      cmd.error(`error: ${(err as Error).message}`);
    }
    return withClient(opts, async (client) => {
      const common = {
        queue: opts.queue,
        payload: opts.payload,
        priority: opts.priority,
        dedupeKey: opts.dedupeKey,
        namespace: opts.namespace,
        delivery: opts.atMostOnce ? ('at_most_once' as const) : undefined,
        retry: opts.maxAttempts === undefined ? undefined : { maxAttempts: opts.maxAttempts },
        leaseMs: opts.leaseMs,
      };
      if (recurrence) {
        const res = await client.scheduleRecurring({ ...common, recurrence });
        if (opts.json) return out(toJson(res));
        out(`job    ${res.job.id}${res.deduplicated ? '  (deduplicated: existing job)' : ''}`);
        out(`kind   ${res.job.kind}`);
        if (res.firstRun) {
          out(`run    ${res.firstRun.id}`);
          out(`due    ${isoRelative(res.firstRun.dueAtMs)}`);
        } else {
          out('run    - (the first occurrence is made nearer its time)');
          out(`next   ${isoRelative(res.job.nextFireAtMs)}`);
        }
        out(`shard  ${res.job.shard}`);
        return;
      }
      const res = await client.schedule({ ...common, at: opts.at, delayMs: opts.in });
      if (opts.json) return out(toJson(res));
      out(`job    ${res.job.id}${res.deduplicated ? '  (deduplicated: existing job)' : ''}`);
      out(`run    ${res.run.id}`);
      out(`due    ${isoRelative(res.run.dueAtMs)}`);
      out(`shard  ${res.run.shard}`);
    });
  });

  connectionOptions(program.command('get <jobId>'))
    .alias('job')
    .description('show a job and its runs; a recurring job also its rule, next 10 fire times, last 10 runs and counts')
    .action((jobId: string, opts: ConnectionOptions) =>
      withClient(opts, async (client) => {
        const res = await client.getJob(jobId);
        if (opts.json) return out(toJson(res));
        out(jobLines(res.job));
        if (res.job.recurrence) {
          out(progressLines(res.job));
          out('');
          out(recurrenceLines(res.job.recurrence));
          out('');
          out('next fire times:');
          out(fireTimesLines(res.nextFireTimesMs));
          if (res.counts) {
            out('');
            out(`counts: ${countsLine(res.counts)}`);
          }
          out('');
          out('latest runs:');
          out(occurrenceRunsTable(res.runs));
          return;
        }
        out('');
        out(runsTable(res.runs));
      }),
    );

  connectionOptions(program.command('run <runId>'))
    .description('show one run')
    .action((runId: string, opts: ConnectionOptions) =>
      withClient(opts, async (client) => {
        const run = await client.getRun(runId);
        out(opts.json ? toJson(run) : runLines(run));
      }),
    );

  connectionOptions(program.command('runs'))
    .description('list runs, oldest first')
    .option('--job <id>', 'only this job')
    .option('--queue <queue>', 'only this queue')
    .addOption(new Option('--status <status>', 'only this status').choices(RUN_STATUSES))
    .option('--due-from <iso|ms>', 'only runs due at or after', epochArg)
    .option('--due-to <iso|ms>', 'only runs due at or before', epochArg)
    .option('--limit <n>', 'page size (1..1000, default 100)', intInArg(1, 1000))
    .option('--page-token <token>', 'continue a previous listing')
    .action((opts: RunsOptions) =>
      withClient(opts, async (client) => {
        const page = await client.listRuns({
          jobId: opts.job,
          queue: opts.queue,
          status: opts.status,
          dueFrom: opts.dueFrom,
          dueTo: opts.dueTo,
          pageSize: opts.limit,
          pageToken: opts.pageToken,
        });
        if (opts.json) return out(toJson(page));
        out(runsTable(page.runs));
        if (page.nextPageToken) process.stderr.write(`more: --page-token ${page.nextPageToken}\n`);
      }),
    );

  connectionOptions(program.command('queues'))
    .description('list the queues holding runs or recurring jobs, in name order')
    .option('--limit <n>', 'page size (1..1000, default 100)', intInArg(1, 1000))
    .option('--page-token <token>', 'continue a previous listing')
    .action((opts: ConnectionOptions & { limit?: number; pageToken?: string }) =>
      withClient(opts, async (client) => {
        const page = await client.listQueues({ pageSize: opts.limit, pageToken: opts.pageToken });
        if (opts.json) return out(toJson(page));
        out(page.queues.join('\n'));
        if (page.nextPageToken) process.stderr.write(`more: --page-token ${page.nextPageToken}\n`);
      }),
    );

  connectionOptions(program.command('cancel <jobId>'))
    .description('cancel a job: runs not fired never fire, a running one is asked to stop')
    .action((jobId: string, opts: ConnectionOptions) =>
      withClient(opts, async (client) => {
        const res = await client.cancelJob(jobId);
        if (opts.json) return out(toJson(res));
        out(`job ${res.job.id}: ${res.job.status}, runs cancelled: ${res.runsCancelled}`);
      }),
    );

  connectionOptions(program.command('reschedule <jobId>'))
    .description('move a job that has not fired to a new due time')
    .addOption(new Option('--in <duration>', 'due after this long: 500ms, 2s, 1m, 1h').argParser(durationArg).conflicts('at'))
    .addOption(new Option('--at <iso>', 'due at this ISO-8601 instant').argParser(instantArg))
    .action((jobId: string, opts: WhenOptions, cmd: Command) => {
      if (opts.in === undefined && opts.at === undefined) cmd.error("error: give one of '--in <duration>' or '--at <iso>'");
      return withClient(opts, async (client) => {
        const run = await client.rescheduleJob(jobId, { at: opts.at, delayMs: opts.in });
        if (opts.json) return out(toJson(run));
        out(`run ${run.id} of job ${run.jobId}: due ${isoRelative(run.dueAtMs)}`);
      });
    });
}
