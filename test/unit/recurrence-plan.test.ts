import { describe, expect, it } from 'vitest';
import { MISSED_ROWS_PER_PASS, planOccurrences, type Recurrence } from '../../daemon/recurring/recurrence.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

function rule(over: Partial<Recurrence> = {}): Recurrence {
  return {
    cadence: { kind: 'interval', everyMs: 1_000, phaseMs: 0 },
    startAtMs: null,
    endAtMs: null,
    jitterMs: 0,
    limit: null,
    overlap: 'skip',
    catchUp: { windowMs: 10_000, mode: 'fire_all', maxRuns: 100 },
    pauseOnFailure: false,
    ...over,
  };
}

describe('planOccurrences: catch-up', () => {
  it('an interval job a day behind: every occurrence accounted for (missed + fired), at most 100 missed rows, quickly', () => {
    const start = performance.now();
    const plan = planOccurrences({ id: 'j', recurrence: rule(), nextFireAtMs: NOW - 86_400_000, occurrences: 0 }, NOW, NOW + 5_000, 1_000);
    expect(performance.now() - start).toBeLessThan(50);
    const fired = plan.runs.filter((r) => r.status === 'scheduled');
    const missedRows = plan.runs.filter((r) => r.status === 'missed');
    // Overdue: [now-1 day, now-1 s): 86,399 occurrences; those within 10 s of now (9 of them: now-10 s .. now-2 s) fire.
    expect(fired.filter((r) => r.nominalMs < NOW - 1_000).map((r) => NOW - r.nominalMs)).toEqual([10_000, 9_000, 8_000, 7_000, 6_000, 5_000, 4_000, 3_000, 2_000]);
    expect(plan.missed).toBe(86_399 - 9);
    expect(missedRows).toHaveLength(MISSED_ROWS_PER_PASS);
    // Then on time: now-1 s .. now+5 s.
    expect(fired.filter((r) => r.nominalMs >= NOW - 1_000)).toHaveLength(7);
    expect(plan.nextFireAtMs).toBe(NOW + 6_000);
  });

  it('fire_once coalesces the overdue ones into the latest; the limit caps what fires', () => {
    const once = planOccurrences(
      { id: 'j', recurrence: rule({ catchUp: { windowMs: 10_000, mode: 'fire_once', maxRuns: 100 } }), nextFireAtMs: NOW - 30_000, occurrences: 0 },
      NOW,
      NOW,
      1_000,
    );
    const overdue = once.runs.filter((r) => r.status === 'scheduled' && r.nominalMs < NOW - 1_000);
    expect(overdue.map((r) => r.nominalMs)).toEqual([NOW - 2_000]);
    expect(once.missed).toBe(29 - 1);
    const limited = planOccurrences({ id: 'j', recurrence: rule({ limit: 3 }), nextFireAtMs: NOW - 5_000, occurrences: 1 }, NOW, NOW + 10_000, 1_000);
    expect(limited.made).toBe(2);
    expect(limited.nextFireAtMs).toBeNull();
  });

  it('a cron job far behind is caught up over several passes, each bounded', () => {
    const r = rule({ cadence: { kind: 'cron', expr: '* * * * * *', tz: 'UTC', dstGap: 'shift', dstRepeat: 'once' } });
    let next: number | null = NOW - 3_600_000;
    let missed = 0;
    let passes = 0;
    const firedOverdue: number[] = [];
    while (next !== null && next < NOW - 1_000 && passes < 10) {
      const start = performance.now();
      const plan = planOccurrences({ id: 'j', recurrence: r, nextFireAtMs: next, occurrences: 0 }, NOW, NOW, 1_000);
      expect(performance.now() - start).toBeLessThan(2_000);
      missed += plan.missed;
      firedOverdue.push(...plan.runs.filter((x) => x.status === 'scheduled' && x.nominalMs < NOW - 1_000).map((x) => x.nominalMs));
      next = plan.nextFireAtMs;
      passes++;
    }
    expect(passes).toBeGreaterThan(1);
    expect(firedOverdue.map((t) => NOW - t)).toEqual([10_000, 9_000, 8_000, 7_000, 6_000, 5_000, 4_000, 3_000, 2_000]);
    expect(missed).toBe(3_599 - 9);
  });
});

describe('planOccurrences: occurrences that have runs already', () => {
  it('are neither made again nor counted toward the limit or as missed (a resume with catch-up after a jittered later one fired, or a backfill)', () => {
    // Cursor 5 s back (a pause withdrew that occurrence); the one after it fired already; limit 4 with 1 made.
    const existing = new Set([NOW - 4_000]);
    const plan = planOccurrences({ id: 'j', recurrence: rule({ limit: 4 }), nextFireAtMs: NOW - 5_000, occurrences: 1, existing }, NOW, NOW + 2_000, 1_000);
    const made = plan.runs.filter((r) => r.status === 'scheduled').map((r) => NOW - r.nominalMs);
    // Three left under the limit, all new: the latest overdue ones by the catch-up rule, -4 s skipped (it has its
    // run), then -1 s on time. Before: -4 s was planned again and counted, so the job ended one short.
    expect(made).toEqual([3_000, 2_000, 1_000]);
    expect(plan.made).toBe(3);
    expect(plan.runs.every((r) => r.nominalMs !== NOW - 4_000)).toBe(true);
    expect(plan.nextFireAtMs).toBeNull();

    // Out of the catch-up window: an occurrence a backfill ran is not missed.
    const old = planOccurrences(
      { id: 'j', recurrence: rule({ catchUp: { windowMs: 1_000, mode: 'fire_all', maxRuns: 100 } }), nextFireAtMs: NOW - 5_000, occurrences: 0, existing: new Set([NOW - 5_000, NOW - 4_000]) },
      NOW,
      NOW,
      0,
    );
    expect(old.runs.filter((r) => r.status === 'missed').map((r) => NOW - r.nominalMs)).toEqual([3_000, 2_000]);
    expect(old.missed).toBe(2);
  });
});
