/**
 * `timelane schedule`'s options for a recurring job (--cron / --every and
 * the rule's settings), and their translation into a RecurrenceInput.
 * The translation is pure and refuses the combinations that make no sense
 * with one clear line each, before anything is sent.
 */
import { Command, Option } from 'commander';
import { durationArg, epochArg, nonNegativeIntArg } from './cli-common.js';
import type { CatchUpModeName, DstGapName, DstRepeatName, OverlapPolicyName, RecurrenceInput } from '@timelane/client';

export interface RecurrenceOptions {
  cron?: string;
  tz?: string;
  dstGap?: DstGapName;
  dstRepeat?: DstRepeatName;
  every?: number;
  phase?: number;
  start?: number;
  end?: number;
  jitter?: number;
  limit?: number;
  overlap?: OverlapPolicyName;
  catchUpWindow?: number;
  catchUp?: CatchUpModeName;
  catchUpMax?: number;
  pauseOnFailure?: boolean;
}

const OVERLAPS: OverlapPolicyName[] = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'];

/** Flags of the rule besides the cadence, with how they are spelled on the command line. */
const RULE_FLAGS: [keyof RecurrenceOptions, string][] = [
  ['start', '--start'],
  ['end', '--end'],
  ['jitter', '--jitter'],
  ['limit', '--limit'],
  ['overlap', '--overlap'],
  ['catchUpWindow', '--catch-up-window'],
  ['catchUp', '--catch-up'],
  ['catchUpMax', '--catch-up-max'],
  ['pauseOnFailure', '--pause-on-failure'],
];
const CRON_FLAGS: [keyof RecurrenceOptions, string][] = [
  ['tz', '--tz'],
  ['dstGap', '--dst-gap'],
  ['dstRepeat', '--dst-repeat'],
];

export function addRecurrenceOptions(cmd: Command): Command {
  return cmd
    .option('--cron <expr>', 'recurring: a cron expression, 5 fields or 6 with seconds first ("*/5 * * * *", "0 9 * * 1-5")')
    .option('--tz <zone>', 'IANA time zone the cron expression is read in (default UTC)')
    .addOption(new Option('--dst-gap <policy>', 'a local time skipped by DST: fire after the gap, or not that day').choices(['shift', 'skip']))
    .addOption(new Option('--dst-repeat <policy>', 'a local time repeated by DST: fire once, or at both').choices(['once', 'twice']))
    .addOption(new Option('--every <duration>', 'recurring: every this long (1s .. 366d), aligned to the Unix epoch').argParser(durationArg))
    .addOption(new Option('--phase <duration>', 'with --every: offset within the period (every 15m at :05: --every 15m --phase 5m)').argParser(durationArg))
    .addOption(new Option('--start <iso|ms>', 'recurring: no occurrence before this instant').argParser(epochArg))
    .addOption(new Option('--end <iso|ms>', 'recurring: no occurrence after this instant').argParser(epochArg))
    .addOption(new Option('--jitter <duration>', 'recurring: fire each occurrence up to this much later (stable per occurrence)').argParser(durationArg))
    .addOption(new Option('--limit <n>', 'recurring: most occurrences ever made').argParser(nonNegativeIntArg))
    .addOption(new Option('--overlap <policy>', 'recurring: when an earlier run still runs (default skip)').choices(OVERLAPS))
    .addOption(new Option('--catch-up-window <duration>', 'recurring: missed occurrences this recent still fire (default 5m)').argParser(durationArg))
    .addOption(new Option('--catch-up <mode>', 'recurring: missed occurrences each fire, or one fires for all').choices(['fire_all', 'fire_once']))
    .addOption(new Option('--catch-up-max <n>', 'recurring: fire_all fires at most this many (default 100)').argParser(nonNegativeIntArg))
    .option('--pause-on-failure', 'recurring: a run that ends dead pauses the job');
}

/**
 * The rule the options describe, or undefined for a one-shot job. Throws an
 * Error whose message names the flags at fault.
 */
export function recurrenceFromOptions(o: RecurrenceOptions & { in?: number; at?: number }): RecurrenceInput | undefined {
  const given = (flags: [keyof RecurrenceOptions, string][]): string[] => flags.filter(([k]) => o[k] !== undefined).map(([, f]) => f);
  const isCron = o.cron !== undefined;
  const isEvery = o.every !== undefined;
  if (isCron && isEvery) throw new Error("give one of '--cron <expr>' or '--every <duration>', not both");
  if (!isCron && !isEvery) {
    const stray = [...given(RULE_FLAGS), ...given(CRON_FLAGS), ...(o.phase !== undefined ? ['--phase'] : [])];
    if (stray.length) throw new Error(`${stray.join(', ')}: only for a recurring job (add '--cron <expr>' or '--every <duration>')`);
    return undefined;
  }
  const cadence = isCron ? '--cron' : '--every';
  if (o.in !== undefined || o.at !== undefined) throw new Error(`${o.in !== undefined ? '--in' : '--at'} cannot be used with ${cadence}: a recurring job fires by its rule (use --start)`);
  if (isEvery && given(CRON_FLAGS).length) throw new Error(`${given(CRON_FLAGS).join(', ')}: only with --cron`);
  if (isCron && o.phase !== undefined) throw new Error('--phase: only with --every (a cron expression sets its own times)');
  const r: RecurrenceInput = isCron ? { cron: o.cron, timeZone: o.tz, dstGap: o.dstGap, dstRepeat: o.dstRepeat } : { everyMs: o.every, phaseMs: o.phase };
  r.startAt = o.start;
  r.endAt = o.end;
  r.jitterMs = o.jitter;
  r.limit = o.limit;
  r.overlap = o.overlap;
  if (o.catchUpWindow !== undefined || o.catchUp !== undefined || o.catchUpMax !== undefined) {
    r.catchUp = { windowMs: o.catchUpWindow, mode: o.catchUp, maxRuns: o.catchUpMax };
  }
  r.pauseOnFailure = o.pauseOnFailure;
  return r;
}
