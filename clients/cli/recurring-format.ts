/** Text rendering of recurring jobs for the CLI (`jobs`, `get` of a recurring job). Pure functions. */
import { formatDuration } from '@timelane/client';
import { clip, iso, isoRelative, keyValues, table } from './format.js';
import type { JobCounts, JobInfo, RecurrenceInfo, RunInfo } from '@timelane/client';

/** The cadence in one phrase: "cron 0 9 * * 1-5 (Europe/Paris)", "every 15m at +5m". */
export function cadenceText(r: RecurrenceInfo): string {
  if (r.cron) return `cron ${r.cron.expression}${r.cron.timeZone && r.cron.timeZone !== 'UTC' ? ` (${r.cron.timeZone})` : ''}`;
  if (r.interval) return `every ${formatDuration(r.interval.everyMs)}${r.interval.phaseMs ? ` at +${formatDuration(r.interval.phaseMs)}` : ''}`;
  return '?';
}

/** A job's rule for a table cell: the cadence, or "once" for a one-shot job. */
export function ruleCell(job: JobInfo): string {
  return job.recurrence ? cadenceText(job.recurrence) : 'once';
}

/** `timelane jobs`: one line per job. */
export function jobsTable(jobs: readonly JobInfo[], now = Date.now()): string {
  return table(
    ['JOB', 'KIND', 'QUEUE', 'STATUS', 'RULE', 'NEXT FIRE'],
    jobs.map((j) => [j.id, j.kind, j.queue, j.status, clip(ruleCell(j), 48), j.nextFireAtMs ? isoRelative(j.nextFireAtMs, now) : '-']),
  );
}

/** Every setting of a rule, as "key  value" lines. */
export function recurrenceLines(r: RecurrenceInfo): string {
  const pairs: [string, string | number | boolean][] = [['rule', cadenceText(r)]];
  if (r.cron) {
    pairs.push(['time zone', r.cron.timeZone], ['dst gap', r.cron.dstGap], ['dst repeat', r.cron.dstRepeat]);
  }
  pairs.push(
    ['start', iso(r.startAtMs)],
    ['end', r.endAtMs ? iso(r.endAtMs) : 'never'],
    ['jitter', r.jitterMs ? formatDuration(r.jitterMs) : '-'],
    ['limit', r.limit || 'none'],
    ['overlap', r.overlap],
    ['catch-up', `${r.catchUp.mode} within ${formatDuration(r.catchUp.windowMs)}, at most ${r.catchUp.maxRuns} runs`],
    ['pause on failure', r.pauseOnFailure],
  );
  return keyValues(pairs);
}

/** The progress of a recurring job: occurrences made, when it fires next, pause note. */
export function progressLines(job: JobInfo, now = Date.now()): string {
  return keyValues([
    ['kind', job.kind],
    ['occurrences', job.occurrences],
    ['next fire', job.nextFireAtMs ? isoRelative(job.nextFireAtMs, now) : '-'],
    ['pause note', job.pauseNote || '-'],
  ]);
}

export function countsLine(c: JobCounts): string {
  return `fired ${c.fired}, completed ${c.completed}, dead ${c.dead}, skipped ${c.skipped}, missed ${c.missed}, scheduled ${c.scheduled}`;
}

/** Next fire times, one per line. */
export function fireTimesLines(times: readonly number[], now = Date.now()): string {
  return times.length ? times.map((t) => `  ${isoRelative(t, now)}`).join('\n') : '  - (paused or ended)';
}

/** A recurring job's runs: with nominal time and origin. */
export function occurrenceRunsTable(runs: readonly RunInfo[]): string {
  return table(
    ['RUN', 'NOMINAL', 'ORIGIN', 'ATTEMPT', 'STATUS', 'DUE', 'FIRED', 'LAG', 'ERROR'],
    runs.map((r) => [
      r.id,
      iso(r.nominalAtMs),
      r.origin || '-',
      String(r.attempt),
      r.status,
      iso(r.dueAtMs),
      iso(r.firedAtMs),
      r.firedAtMs ? `${r.lagMs.toFixed(1)}ms` : '-',
      clip(r.error, 40),
    ]),
  );
}
