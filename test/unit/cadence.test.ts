import { CronExpression } from 'cron-parser';
import { describe, expect, it, vi } from 'vitest';
import {
  CadenceError,
  jitterMs,
  nextOccurrence,
  occurrencesBetween,
  validateCadence,
  type Cadence,
  type DstGapPolicy,
  type DstRepeatPolicy,
} from '../../daemon/recurring/cadence.js';
import { seeded } from '../helpers/seeded-random.js';

// Expected instants below are worked out by hand from the zones' 2026 rules:
//   Europe/Paris        CET +1 → CEST +2 on 29 Mar at 01:00Z; back on 25 Oct at 01:00Z
//   America/New_York    EST −5 → EDT −4 on 8 Mar at 07:00Z;   back on 1 Nov at 06:00Z
//   Australia/Lord_Howe +10:30 → +11 on 4 Oct (local 02:00 → 02:30) at 3 Oct 15:30Z;
//                       back on 5 Apr (local 02:00 → 01:30) at 4 Apr 15:00Z
//   America/Santiago    −4 → −3 on 6 Sep (local 00:00 → 01:00) at 04:00Z;
//                       back on 4/5 Apr (local 24:00 → 23:00) at 5 Apr 03:00Z
// Calendar: 1 Jan 2026 is a Thursday, 1 Mar and 1 Nov are Sundays, 1 Jun a Monday.

const at = (isoZ: string): number => Date.parse(isoZ);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString().replace('.000Z', 'Z'));

function cron(expr: string, tz = 'UTC', dstGap: DstGapPolicy = 'shift', dstRepeat: DstRepeatPolicy = 'once'): Cadence {
  return { kind: 'cron', expr, tz, dstGap, dstRepeat };
}

/** Occurrences in (from, to], as ISO strings. */
function between(c: Cadence, from: string, to: string, cap = 1_000): (string | null)[] {
  return occurrencesBetween(c, at(from), at(to), cap).map(iso);
}

function next(c: Cadence, after: string): string | null {
  return iso(nextOccurrence(c, at(after)));
}


describe('cron syntax', () => {
  it('six fields put seconds first: */10 fires every ten seconds, strictly after the start', () => {
    const c = cron('*/10 * * * * *');
    expect(next(c, '2026-01-01T00:00:05Z')).toBe('2026-01-01T00:00:10Z');
    expect(next(c, '2026-01-01T00:00:10Z')).toBe('2026-01-01T00:00:20Z');
    expect(next(c, '2026-01-01T00:00:09.999Z')).toBe('2026-01-01T00:00:10Z');
    expect(between(c, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z')).toEqual([
      '2026-01-01T00:00:10Z',
      '2026-01-01T00:00:20Z',
      '2026-01-01T00:00:30Z',
      '2026-01-01T00:00:40Z',
      '2026-01-01T00:00:50Z',
      '2026-01-01T00:01:00Z',
    ]);
    expect(next(cron('30 0 9 * * *'), '2026-01-01T00:00:00Z')).toBe('2026-01-01T09:00:30Z');
  });

  it('L is the last day of each month (28 in 2026, 29 in 2028)', () => {
    const c = cron('0 12 L * *');
    expect(between(c, '2026-02-10T00:00:00Z', '2026-05-01T00:00:00Z')).toEqual([
      '2026-02-28T12:00:00Z',
      '2026-03-31T12:00:00Z',
      '2026-04-30T12:00:00Z',
    ]);
    expect(next(c, '2028-02-01T00:00:00Z')).toBe('2028-02-29T12:00:00Z');
    // 5L: the last Friday of the month.
    expect(between(cron('0 9 * * 5L'), '2026-01-01T00:00:00Z', '2026-03-01T00:00:00Z')).toEqual([
      '2026-01-30T09:00:00Z',
      '2026-02-27T09:00:00Z',
    ]);
  });

  it('1#2 is the second Monday of each month, at 09:00 Paris time (CET, then CEST in April)', () => {
    const c = cron('0 9 * * 1#2', 'Europe/Paris');
    expect(between(c, '2026-01-01T00:00:00Z', '2026-05-01T00:00:00Z')).toEqual([
      '2026-01-12T08:00:00Z',
      '2026-02-09T08:00:00Z',
      '2026-03-09T08:00:00Z',
      '2026-04-13T07:00:00Z',
    ]);
  });

  it('ranges, steps, lists and names', () => {
    expect(between(cron('0 8-18/5 * * *'), '2026-01-01T00:00:00Z', '2026-01-02T09:00:00Z')).toEqual([
      '2026-01-01T08:00:00Z',
      '2026-01-01T13:00:00Z',
      '2026-01-01T18:00:00Z',
      '2026-01-02T08:00:00Z',
    ]);
    expect(between(cron('0 0 1 1-12/3 *'), '2025-12-31T00:00:00Z', '2027-01-01T00:00:00Z')).toEqual([
      '2026-01-01T00:00:00Z',
      '2026-04-01T00:00:00Z',
      '2026-07-01T00:00:00Z',
      '2026-10-01T00:00:00Z',
      '2027-01-01T00:00:00Z',
    ]);
    expect(between(cron('15-45/15 10 * * *'), '2026-01-01T00:00:00Z', '2026-01-01T23:00:00Z')).toEqual([
      '2026-01-01T10:15:00Z',
      '2026-01-01T10:30:00Z',
      '2026-01-01T10:45:00Z',
    ]);
    expect(between(cron('0 6,18 * * *'), '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')).toEqual(['2026-01-01T06:00:00Z', '2026-01-01T18:00:00Z']);
    // Names, and 7 as Sunday: 2 Jan 2026 is a Friday, 4 Jan a Sunday.
    expect(next(cron('0 9 * * MON-FRI'), '2026-01-02T09:00:00Z')).toBe('2026-01-05T09:00:00Z');
    expect(next(cron('0 9 * * 7'), '2026-01-01T00:00:00Z')).toBe('2026-01-04T09:00:00Z');
  });

  it('@hourly fires on the hour of the zone (Kolkata is +05:30, so at :30 UTC)', () => {
    expect(next(cron('@hourly'), '2026-05-05T10:00:00Z')).toBe('2026-05-05T11:00:00Z');
    expect(next(cron('@hourly'), '2026-05-05T10:59:59.999Z')).toBe('2026-05-05T11:00:00Z');
    expect(next(cron('@hourly', 'Asia/Kolkata'), '2026-05-05T10:00:00Z')).toBe('2026-05-05T10:30:00Z');
    expect(next(cron('@daily', 'Asia/Kolkata'), '2026-05-05T10:00:00Z')).toBe('2026-05-05T18:30:00Z');
  });

  it('weekdays at 09:00 Europe/Paris skip the weekend', () => {
    const c = cron('0 9 * * 1-5', 'Europe/Paris');
    // Friday 5 June 2026, 09:00 CEST = 07:00Z; next is Monday 8 June.
    expect(next(c, '2026-06-05T07:00:00Z')).toBe('2026-06-08T07:00:00Z');
    expect(between(c, '2026-06-05T06:00:00Z', '2026-06-09T12:00:00Z')).toEqual([
      '2026-06-05T07:00:00Z',
      '2026-06-08T07:00:00Z',
      '2026-06-09T07:00:00Z',
    ]);
    // In winter 09:00 CET is 08:00Z: Friday 9 January → Monday 12 January.
    expect(next(c, '2026-01-09T08:00:00Z')).toBe('2026-01-12T08:00:00Z');
  });
});

describe('DST policy: wall times that do not exist or happen twice', () => {
  it('Europe/Paris daily 02:30, spring forward (29 March): shift fires at 03:00 CEST, skip fires nothing that day', () => {
    const from = '2026-03-27T00:00:00Z';
    const to = '2026-03-31T00:00:00Z';
    expect(between(cron('30 2 * * *', 'Europe/Paris', 'shift'), from, to)).toEqual([
      '2026-03-27T01:30:00Z',
      '2026-03-28T01:30:00Z',
      '2026-03-29T01:00:00Z', // the transition instant: 03:00 CEST
      '2026-03-30T00:30:00Z',
    ]);
    expect(between(cron('30 2 * * *', 'Europe/Paris', 'skip'), from, to)).toEqual([
      '2026-03-27T01:30:00Z',
      '2026-03-28T01:30:00Z',
      '2026-03-30T00:30:00Z',
    ]);
  });

  it('Europe/Paris daily 02:30, fall back (25 October): once fires at the first 02:30, twice an hour apart', () => {
    const from = '2026-10-23T00:00:00Z';
    const to = '2026-10-27T00:00:00Z';
    expect(between(cron('30 2 * * *', 'Europe/Paris', 'shift', 'once'), from, to)).toEqual([
      '2026-10-23T00:30:00Z',
      '2026-10-24T00:30:00Z',
      '2026-10-25T00:30:00Z', // 02:30 CEST
      '2026-10-26T01:30:00Z',
    ]);
    expect(between(cron('30 2 * * *', 'Europe/Paris', 'shift', 'twice'), from, to)).toEqual([
      '2026-10-23T00:30:00Z',
      '2026-10-24T00:30:00Z',
      '2026-10-25T00:30:00Z', // 02:30 CEST
      '2026-10-25T01:30:00Z', // 02:30 CET
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('America/New_York daily 02:30: spring (8 March) shifts to 03:00 EDT or is skipped; in fall 02:30 is not repeated', () => {
    expect(between(cron('30 2 * * *', 'America/New_York', 'shift'), '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).toEqual([
      '2026-03-07T07:30:00Z',
      '2026-03-08T07:00:00Z',
      '2026-03-09T06:30:00Z',
    ]);
    expect(between(cron('30 2 * * *', 'America/New_York', 'skip'), '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).toEqual([
      '2026-03-07T07:30:00Z',
      '2026-03-09T06:30:00Z',
    ]);
    // 1 November: the clock goes 01:59 EDT → 01:00 EST, so 02:30 happens once (EST) even under twice.
    expect(between(cron('30 2 * * *', 'America/New_York', 'shift', 'twice'), '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')).toEqual([
      '2026-10-31T06:30:00Z',
      '2026-11-01T07:30:00Z',
      '2026-11-02T07:30:00Z',
    ]);
  });

  it('America/New_York daily 01:30 on 1 November: once at 01:30 EDT, twice also at 01:30 EST', () => {
    expect(between(cron('30 1 * * *', 'America/New_York', 'shift', 'once'), '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')).toEqual([
      '2026-10-31T05:30:00Z',
      '2026-11-01T05:30:00Z',
      '2026-11-02T06:30:00Z',
    ]);
    expect(between(cron('30 1 * * *', 'America/New_York', 'shift', 'twice'), '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')).toEqual([
      '2026-10-31T05:30:00Z',
      '2026-11-01T05:30:00Z',
      '2026-11-01T06:30:00Z',
      '2026-11-02T06:30:00Z',
    ]);
  });

  it('Australia/Lord_Howe moves by 30 minutes: 01:45 repeats on 5 April, 02:15 does not exist on 4 October', () => {
    const from = '2026-04-03T00:00:00Z';
    const to = '2026-04-06T00:00:00Z';
    expect(between(cron('45 1 * * *', 'Australia/Lord_Howe', 'shift', 'once'), from, to)).toEqual([
      '2026-04-03T14:45:00Z', // 4 Apr 01:45 +11:00
      '2026-04-04T14:45:00Z', // 5 Apr 01:45 +11:00 (first)
      '2026-04-05T15:15:00Z', // 6 Apr 01:45 +10:30
    ]);
    expect(between(cron('45 1 * * *', 'Australia/Lord_Howe', 'shift', 'twice'), from, to)).toEqual([
      '2026-04-03T14:45:00Z',
      '2026-04-04T14:45:00Z', // 5 Apr 01:45 +11:00
      '2026-04-04T15:15:00Z', // 5 Apr 01:45 +10:30, half an hour later
      '2026-04-05T15:15:00Z',
    ]);
    expect(between(cron('15 2 * * *', 'Australia/Lord_Howe', 'shift'), '2026-10-02T00:00:00Z', '2026-10-05T00:00:00Z')).toEqual([
      '2026-10-02T15:45:00Z', // 3 Oct 02:15 +10:30
      '2026-10-03T15:30:00Z', // 4 Oct: 02:15 does not exist; 02:30 +11:00
      '2026-10-04T15:15:00Z', // 5 Oct 02:15 +11:00
    ]);
    expect(between(cron('15 2 * * *', 'Australia/Lord_Howe', 'skip'), '2026-10-02T00:00:00Z', '2026-10-05T00:00:00Z')).toEqual([
      '2026-10-02T15:45:00Z',
      '2026-10-04T15:15:00Z',
    ]);
  });

  it('America/Santiago changes at midnight: on 6 September there is no 00:00 or 00:30', () => {
    const from = '2026-09-04T12:00:00Z';
    const to = '2026-09-07T12:00:00Z';
    expect(between(cron('0 0 * * *', 'America/Santiago', 'shift'), from, to)).toEqual([
      '2026-09-05T04:00:00Z', // 00:00 −04
      '2026-09-06T04:00:00Z', // 01:00 −03, the first instant of 6 September
      '2026-09-07T03:00:00Z', // 00:00 −03
    ]);
    expect(between(cron('30 0 * * *', 'America/Santiago', 'shift'), from, to)).toEqual([
      '2026-09-05T04:30:00Z',
      '2026-09-06T04:00:00Z',
      '2026-09-07T03:30:00Z',
    ]);
    expect(between(cron('0 0 * * *', 'America/Santiago', 'skip'), from, to)).toEqual(['2026-09-05T04:00:00Z', '2026-09-07T03:00:00Z']);
    // 4 April: 23:00–23:59 happens twice (−03, then −04).
    expect(between(cron('30 23 * * *', 'America/Santiago', 'shift', 'twice'), '2026-04-03T12:00:00Z', '2026-04-06T12:00:00Z')).toEqual([
      '2026-04-04T02:30:00Z',
      '2026-04-05T02:30:00Z',
      '2026-04-05T03:30:00Z',
      '2026-04-06T03:30:00Z',
    ]);
  });

  it('*/15 over the repeated hour: twice gives 8 occurrences in ascending order, once gives the first pass only', () => {
    const from = '2026-10-24T23:59:00Z';
    const to = '2026-10-25T01:59:00Z';
    expect(between(cron('*/15 * * * *', 'Europe/Paris', 'shift', 'twice'), from, to)).toEqual([
      '2026-10-25T00:00:00Z', // 02:00 CEST
      '2026-10-25T00:15:00Z',
      '2026-10-25T00:30:00Z',
      '2026-10-25T00:45:00Z',
      '2026-10-25T01:00:00Z', // 02:00 CET
      '2026-10-25T01:15:00Z',
      '2026-10-25T01:30:00Z',
      '2026-10-25T01:45:00Z',
    ]);
    expect(between(cron('*/15 * * * *', 'Europe/Paris', 'shift', 'once'), from, to)).toEqual([
      '2026-10-25T00:00:00Z',
      '2026-10-25T00:15:00Z',
      '2026-10-25T00:30:00Z',
      '2026-10-25T00:45:00Z',
    ]);
    // From inside the first pass, and inside the second.
    expect(next(cron('*/15 * * * *', 'Europe/Paris', 'shift', 'once'), '2026-10-25T00:50:00Z')).toBe('2026-10-25T02:00:00Z'); // 03:00 CET
    expect(next(cron('*/15 * * * *', 'Europe/Paris', 'shift', 'twice'), '2026-10-25T00:50:00Z')).toBe('2026-10-25T01:00:00Z');
    expect(next(cron('*/15 * * * *', 'Europe/Paris', 'shift', 'twice'), '2026-10-25T01:20:00Z')).toBe('2026-10-25T01:30:00Z');
  });

  it('shift: several wall times in one gap give one occurrence at the transition', () => {
    // 02:10, 02:20 and 02:40 do not exist on 29 March in Paris.
    expect(between(cron('10,20,40 2 * * *', 'Europe/Paris', 'shift'), '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z')).toEqual([
      '2026-03-29T01:00:00Z',
      '2026-03-30T00:10:00Z',
      '2026-03-30T00:20:00Z',
      '2026-03-30T00:40:00Z',
    ]);
    expect(between(cron('10,20,40 2 * * *', 'Europe/Paris', 'skip'), '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z')).toEqual([
      '2026-03-30T00:10:00Z',
      '2026-03-30T00:20:00Z',
      '2026-03-30T00:40:00Z',
    ]);
    // 02:00–02:45 and 03:00 all land on 01:00Z: one occurrence, not five.
    expect(between(cron('*/15 * * * *', 'Europe/Paris', 'shift'), '2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z')).toEqual([
      '2026-03-29T00:45:00Z',
      '2026-03-29T01:00:00Z',
      '2026-03-29T01:15:00Z',
      '2026-03-29T01:30:00Z',
    ]);
    // Every 20 s during hour 2: 180 missing wall times, one occurrence, then the next day.
    const seconds = cron('*/20 * 2 * * *', 'Europe/Paris', 'shift');
    expect(next(seconds, '2026-03-29T00:59:59Z')).toBe('2026-03-29T01:00:00Z');
    expect(next(seconds, '2026-03-29T01:00:00Z')).toBe('2026-03-30T00:00:00Z');
  });

  it('a daily 02:30 Paris job over 2026: 365 with shift+once, 364 with skip+once, 366 with shift+twice', () => {
    const from = '2025-12-31T23:00:00Z'; // 1 January 00:00 CET
    const to = '2026-12-31T23:00:00Z';
    const count = (g: DstGapPolicy, r: DstRepeatPolicy): number => between(cron('30 2 * * *', 'Europe/Paris', g, r), from, to).length;
    expect(count('shift', 'once')).toBe(365);
    expect(count('skip', 'once')).toBe(364);
    expect(count('shift', 'twice')).toBe(366);
    expect(count('skip', 'twice')).toBe(365);
  });

  it('null when the policy leaves nothing: the last Sunday of March at 02:30 in Paris is always in the gap', () => {
    expect(nextOccurrence(cron('30 2 * 3 0L', 'Europe/Paris', 'skip'), at('2026-01-01T00:00:00Z'))).toBeNull();
    expect(next(cron('30 2 * 3 0L', 'Europe/Paris', 'shift'), '2026-01-01T00:00:00Z')).toBe('2026-03-29T01:00:00Z');
  });
});

describe('shared cron matches', () => {
  it('jobs of one expression in different zones and eras, asked in turn, each get their own sequence', () => {
    // One expression, many wall-clock regions at once: 4 zones live in 2026
    // and 10 jobs catching up from earlier years (more than the cache keeps
    // windows for), each walking 20 days, round-robin.
    const DAY = 86_400_000;
    const jobs = [
      { c: cron('0 9 * * *', 'UTC'), t: at('2026-01-01T00:00:00Z'), first: at('2026-01-01T09:00:00Z') },
      { c: cron('0 9 * * *', 'Asia/Tokyo'), t: at('2026-01-01T00:00:00Z'), first: at('2026-01-02T00:00:00Z') }, // 09:00 JST on 1 Jan is the start itself
      { c: cron('0 9 * * *', 'America/New_York'), t: at('2026-01-01T00:00:00Z'), first: at('2026-01-01T14:00:00Z') },
      { c: cron('0 9 * * *', 'Asia/Kolkata'), t: at('2026-01-01T00:00:00Z'), first: at('2026-01-01T03:30:00Z') },
      ...Array.from({ length: 10 }, (_, i) => ({
        c: cron('0 9 * * *', 'UTC'),
        t: at(`${2016 + i}-01-01T00:00:00Z`),
        first: at(`${2016 + i}-01-01T09:00:00Z`),
      })),
    ];
    for (let k = 0; k < 20; k++) {
      for (const job of jobs) {
        const t = nextOccurrence(job.c, job.t);
        expect(iso(t)).toBe(iso(job.first + k * DAY));
        job.t = t as number;
      }
    }
  });
});

describe('interval', () => {
  it('occurrences are phase + k·every, aligned to the epoch', () => {
    const c: Cadence = { kind: 'interval', everyMs: 15 * 60_000, phaseMs: 5 * 60_000 };
    expect(next(c, '2026-01-01T00:00:00Z')).toBe('2026-01-01T00:05:00Z');
    expect(next(c, '2026-01-01T00:05:00Z')).toBe('2026-01-01T00:20:00Z');
    expect(next(c, '2026-01-01T00:04:59.999Z')).toBe('2026-01-01T00:05:00Z');
    expect(nextOccurrence({ kind: 'interval', everyMs: 1_000, phaseMs: 0 }, -1_500)).toBe(-1_000);
  });

  it('1,000 late fires in a row still land exactly on :05/:20/:35/:50 (no drift)', () => {
    const every = 15 * 60_000;
    const c: Cadence = { kind: 'interval', everyMs: every, phaseMs: 5 * 60_000 };
    const rand = seeded(7);
    const first = at('2026-01-01T00:05:00Z');
    let prev = first;
    for (let i = 0; i < 1_000; i++) {
      const firedAt = prev + Math.floor(rand() * every); // late by up to (not including) one interval
      const t = nextOccurrence(c, firedAt);
      expect(t).toBe(prev + every);
      const d = new Date(t as number);
      expect([5, 20, 35, 50]).toContain(d.getUTCMinutes());
      expect(d.getUTCSeconds() * 1_000 + d.getUTCMilliseconds()).toBe(0);
      prev = t as number;
    }
    expect(iso(prev)).toBe('2026-01-11T10:05:00Z'); // 1,000 × 15 min = 10 d 10 h later
  });
});

describe('occurrencesBetween', () => {
  const hourly: Cadence = { kind: 'interval', everyMs: 3_600_000, phaseMs: 0 };

  it('excludes the start and includes the end', () => {
    expect(between(hourly, '2026-01-01T10:00:00Z', '2026-01-01T13:00:00Z')).toEqual([
      '2026-01-01T11:00:00Z',
      '2026-01-01T12:00:00Z',
      '2026-01-01T13:00:00Z',
    ]);
    expect(between(hourly, '2026-01-01T10:00:00Z', '2026-01-01T12:59:59.999Z')).toEqual(['2026-01-01T11:00:00Z', '2026-01-01T12:00:00Z']);
    expect(between(cron('0 * * * *'), '2026-01-01T10:00:00Z', '2026-01-01T13:00:00Z')).toEqual([
      '2026-01-01T11:00:00Z',
      '2026-01-01T12:00:00Z',
      '2026-01-01T13:00:00Z',
    ]);
  });

  it('stops at the cap, and is empty for an empty range or a cap of 0', () => {
    expect(between(hourly, '2026-01-01T10:00:00Z', '2026-01-01T20:00:00Z', 2)).toEqual(['2026-01-01T11:00:00Z', '2026-01-01T12:00:00Z']);
    expect(between(cron('0 * * * *'), '2026-01-01T10:00:00Z', '2026-01-01T20:00:00Z', 2)).toEqual(['2026-01-01T11:00:00Z', '2026-01-01T12:00:00Z']);
    expect(between(hourly, '2026-01-01T10:00:00Z', '2026-01-01T20:00:00Z', 0)).toEqual([]);
    expect(between(hourly, '2026-01-01T11:00:00Z', '2026-01-01T11:00:00Z')).toEqual([]);
    expect(between(hourly, '2026-01-01T12:00:00Z', '2026-01-01T11:00:00Z')).toEqual([]);
  });
});

describe('jitterMs', () => {
  it('is a function of (jobId, nominal): the same inputs give the same jitter', () => {
    const nominal = at('2026-01-01T00:05:00Z');
    const first = jitterMs('job-1', nominal, 30_000);
    expect(jitterMs('job-1', nominal, 30_000)).toBe(first);
    const again = Array.from({ length: 100 }, (_, i) => jitterMs(`job-${i}`, nominal + i * 60_000, 30_000));
    expect(Array.from({ length: 100 }, (_, i) => jitterMs(`job-${i}`, nominal + i * 60_000, 30_000))).toEqual(again);
  });

  it('stays within [0, max] as whole ms and spreads over the range', () => {
    const values: number[] = [];
    for (let i = 0; i < 5_000; i++) values.push(jitterMs('job-a', 1_767_225_600_000 + i * 900_000, 5_000));
    for (const v of values) {
      expect(Number.isInteger(v)).toBe(true);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(5_000);
    }
    expect(Math.min(...values)).toBeLessThan(250);
    expect(Math.max(...values)).toBeGreaterThan(4_750);
    // Different jobs at the same nominal time are spread too (the point of jitter).
    const sameTime = new Set(Array.from({ length: 200 }, (_, i) => jitterMs(`job-${i}`, 1_767_225_600_000, 5_000)));
    expect(sameTime.size).toBeGreaterThan(150);
    // max 1: both 0 and 1 occur.
    expect(new Set(Array.from({ length: 100 }, (_, i) => jitterMs('j', i * 1_000, 1)))).toEqual(new Set([0, 1]));
  });

  it('is 0 when maxJitterMs is 0', () => {
    for (let i = 0; i < 100; i++) expect(jitterMs(`job-${i}`, i * 1_000, 0)).toBe(0);
  });
});

describe('validateCadence', () => {
  function fieldOf(c: Cadence): string | null {
    try {
      validateCadence(c);
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(CadenceError);
      return (err as CadenceError).field;
    }
  }

  it('accepts 5 and 6 fields, L, #, ranges, steps, names, macros, zones', () => {
    for (const expr of ['*/15 * * * *', '*/10 * * * * *', '0 12 L * *', '0 9 * * 1#2', '0 8-18/5 * * *', '0 9 * * MON-FRI', '@hourly', '@daily', '@weekly', '@monthly', '@yearly']) {
      expect(fieldOf(cron(expr, 'Europe/Paris')), expr).toBeNull();
    }
    expect(fieldOf(cron('0 9 * * *', 'UTC'))).toBeNull();
    expect(fieldOf(cron('0 9 * * *', 'Australia/Lord_Howe', 'skip', 'twice'))).toBeNull();
    expect(fieldOf({ kind: 'interval', everyMs: 1_000, phaseMs: 999 })).toBeNull();
    expect(fieldOf({ kind: 'interval', everyMs: 366 * 86_400_000, phaseMs: 0 })).toBeNull();
  });

  it('names the cron field for a bad expression, a wrong field count, or a too-long one', () => {
    expect(fieldOf(cron('not a cron'))).toBe('cron');
    expect(fieldOf(cron('0 0 9 * * * 2026'))).toBe('cron'); // 7 fields
    expect(fieldOf(cron('* * * *'))).toBe('cron'); // 4 fields: cron-parser alone would fill them in
    expect(fieldOf(cron(''))).toBe('cron');
    expect(fieldOf(cron('60 * * * *'))).toBe('cron');
    expect(fieldOf(cron('0 9 * * 1#6'))).toBe('cron');
    expect(fieldOf(cron('0 0 30 2 *'))).toBe('cron');
    expect(fieldOf(cron('@fortnightly'))).toBe('cron');
    const long = cron(`${Array.from({ length: 130 }, (_, i) => i % 60).join(',')} * * * *`); // 359 characters
    expect(fieldOf(long)).toBe('cron');
    expect(() => validateCadence(long)).toThrow(/at most 256 characters/);
  });

  it('names tz for a zone that is not IANA', () => {
    expect(fieldOf(cron('0 9 * * *', 'Mars/Olympus_Mons'))).toBe('tz');
    expect(fieldOf(cron('0 9 * * *', ''))).toBe('tz');
  });

  it('names every_ms and phase_ms for intervals out of range', () => {
    expect(fieldOf({ kind: 'interval', everyMs: 0, phaseMs: 0 })).toBe('every_ms');
    expect(fieldOf({ kind: 'interval', everyMs: 999, phaseMs: 0 })).toBe('every_ms');
    expect(fieldOf({ kind: 'interval', everyMs: 1_500.5, phaseMs: 0 })).toBe('every_ms');
    expect(fieldOf({ kind: 'interval', everyMs: 366 * 86_400_000 + 1, phaseMs: 0 })).toBe('every_ms');
    expect(fieldOf({ kind: 'interval', everyMs: 60_000, phaseMs: 60_000 })).toBe('phase_ms');
    expect(fieldOf({ kind: 'interval', everyMs: 60_000, phaseMs: -1 })).toBe('phase_ms');
  });

  it('the message states the rule broken', () => {
    expect(() => validateCadence(cron('0 0 9 * * * 2026'))).toThrow(/5 fields, or 6 with seconds first/);
    expect(() => validateCadence({ kind: 'interval', everyMs: 60_000, phaseMs: 60_000 })).toThrow(/phase_ms < every_ms/);
  });
});

describe('a skip cron whose matches fill a gap', () => {
  it('steps over the gap at once: every second of 02:xx on the last Sunday of March or October, Paris', () => {
    // 3,600 matches fall in the March gap, each read from cron-parser (25–70 µs apiece): ~180 ms a
    // call, which ScheduleBatch paid per request — 20 such requests blocked the daemon 3.7 s and it lost its leases.
    const reads = vi.spyOn(CronExpression.prototype, 'next');
    try {
      const c = cron('* * 2 * 3,10 0L', 'Europe/Paris', 'skip');
      expect(next(c, '2026-01-01T00:00:00Z')).toBe('2026-10-25T00:00:00Z'); // 02:00 CEST, the first pass
      // Before: 3,600 and more.
      expect(reads.mock.calls.length).toBeLessThan(300);
    } finally {
      reads.mockRestore();
    }
  });
});
