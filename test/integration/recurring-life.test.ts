/**
 * Recurring jobs on the production engine (DaemonParts: real Postgres, the
 * materialiser, the fenced claim), for the parts of the rule that
 * recurring.test.ts leaves untested:
 *
 * - start_at / end_at: occurrences only inside [start, end], both inclusive;
 * - jitter: every due time in [nominal, nominal + jitter], jitter really
 *   applied, and a run fires at its jittered due time;
 * - overlap allow_all: runs of one job fire alongside each other;
 * - catch-up: fire_all fires at most `max_runs` (the latest), after an outage
 *   and after a resume with catch-up; fire_once fires one; the rest are
 *   recorded as missed runs and counted in the job; a resume, like the
 *   materialiser, treats an occurrence less than a second late as on time;
 * - the counts GetJob shows (skipped, missed, fired) are the numbers of runs;
 * - a recurring occurrence retried after a retryable failure: attempt 2 of the
 *   same occurrence (nominal time, idempotency key, origin), and the next
 *   occurrence still comes on schedule.
 *
 * As in recurring.test.ts, the recording sink never answers: a fired run stays
 * "running" until the test answers it through the engine's Answers. Intervals
 * below the API's 1 s minimum (validation is the gRPC layer's; the service
 * takes any rule) keep the file fast.
 *
 * Catch-up needs occurrences nobody made in time. The tests do what the
 * existing catch-up tests do: a job whose shard nobody owns, or a paused job,
 * with its `next_fire_at` set back in the past. An every-minute rule whose
 * newest overdue occurrence is 5 s old makes every count exact: no
 * occurrence lies near the lateness tolerance (1 s) or the catch-up window's
 * edge, however slowly the machine runs, and the next on-time one is ~55 s away.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, intervalRecurrence, scheduleInput, waitFor, type PartsOptions } from '../helpers/daemon-parts.js';
import type { Recurrence } from '../../daemon/recurring/recurrence.js';
import { RecurringService } from '../../daemon/recurring/recurring-service.js';
import { RUN_COLUMNS, type RunRow } from '../../daemon/db/queries/columns.js';

let db: TestDatabase;
let parts: DaemonParts | undefined;

beforeAll(async () => {
  db = await createTestDatabase(1);
});
afterEach(async () => {
  await parts?.stop();
  parts = undefined;
  // Each test starts from no jobs: a per-100-ms job of one test must not fire (and load the machine) in the next.
  await db.pool.query('TRUNCATE runs, jobs');
});
afterAll(async () => {
  await db?.drop();
});

const every = intervalRecurrence;

const MINUTE = 60_000;

/**
 * An every-minute rule whose occurrences fall on `newestMs` + k minutes: the
 * test puts its newest overdue occurrence exactly where it wants it.
 */
function everyMinuteThrough(newestMs: number, catchUp: Recurrence['catchUp']): Recurrence {
  return every(MINUTE, { cadence: { kind: 'interval', everyMs: MINUTE, phaseMs: ((newestMs % MINUTE) + MINUTE) % MINUTE }, catchUp });
}

function partsFor(over: Partial<PartsOptions> = {}): DaemonParts {
  parts = new DaemonParts({ db: db.pool, shardCount: 1, windowMs: 3_000, loadIntervalMs: 200, ...over });
  return parts;
}

async function start(over: Partial<PartsOptions> = {}): Promise<DaemonParts> {
  const p = partsFor(over);
  await p.own([0]);
  return p;
}

/** Every run of the job, in nominal order (attempts of one occurrence together). */
async function runsOf(jobId: string): Promise<RunRow[]> {
  const { rows } = await db.pool.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.job_id = $1 ORDER BY r.nominal_at NULLS LAST, r.attempt, r.id`, [jobId]);
  return rows;
}

async function createJob(p: DaemonParts, rule: Recurrence, over: Parameters<typeof scheduleInput>[1] = {}): Promise<string> {
  const [s] = await p.recurring.schedule([{ ...scheduleInput(0, { queue: 'rec', ...over }), recurrence: rule }]);
  return s.job.id;
}

/** Moves a job's next occurrence (what the materialiser or a resume starts from) to `atMs`. */
async function setNextFireAt(jobId: string, atMs: number): Promise<void> {
  await db.pool.query('UPDATE jobs SET next_fire_at = to_timestamp($2::int8 / 1000.0) WHERE id = $1', [jobId, atMs]);
}

function deliveredOf(p: DaemonParts, jobId: string) {
  return p.deliveries.filter((d) => d.run.job_id === jobId);
}

function refOf(p: DaemonParts, runId: number) {
  const d = p.deliveries.find((x) => x.run.id === runId)!;
  return { runId, shard: d.run.shard, fence: d.run.fence, deliveries: d.run.deliveries, sentAtMs: d.atWallMs };
}

const nominals = (rs: readonly { nominal_at_ms: number | null }[]): number[] => rs.map((r) => r.nominal_at_ms!);

describe('start and end', () => {
  // Why: nothing else checks that a rule's bounds hold at the materialiser (the
  // plan's unit tests do not run it), nor that both ends are inclusive.
  it('occurrences fire only inside [start_at, end_at], both ends included, and the job then completes', async () => {
    // A 1 s window: the start lies beyond Schedule's horizon, so the
    // materialiser — not Schedule — makes every occurrence and meets the end.
    const p = await start({ windowMs: 1_000 });
    const P = 200;
    // 3.5 s ahead: beyond Schedule's horizon even if a loaded machine stalls for 2 s before Schedule runs.
    const startAt = Math.ceil((Date.now() + 3_500) / P) * P; // on the lattice: the start itself is an occurrence
    const endAt = startAt + 5 * P; // and so is the end
    const jobId = await createJob(p, every(P, { startAtMs: startAt, endAtMs: endAt }));
    expect(await runsOf(jobId)).toHaveLength(0); // nothing within Schedule's horizon
    const expected = [0, 1, 2, 3, 4, 5].map((k) => startAt + k * P);

    // The rule ends when the materialiser plans past end_at (or, broken, makes a run past it).
    await waitFor(
      async () => (await p.scheduling.getJob(jobId)).job.status === 'completed' || (await runsOf(jobId)).some((r) => r.nominal_at_ms! > endAt),
      8_000,
      'the job to complete at its end',
    );
    // Every run the job has — so every run it will ever fire — lies in [start, end].
    const runs = await runsOf(jobId);
    expect(nominals(runs)).toEqual(expected);
    for (const r of runs) {
      expect(r.due_at_ms).toBeGreaterThanOrEqual(startAt);
      expect(r.due_at_ms).toBeLessThanOrEqual(endAt);
    }
    const { job } = await p.scheduling.getJob(jobId);
    expect(job.status).toBe('completed');
    expect(job.next_fire_at_ms).toBeNull();
    expect(job.occurrences).toBe(expected.length);

    await waitFor(() => deliveredOf(p, jobId).length >= expected.length, 5_000, 'every occurrence in [start, end] fired');
    for (const r of await runsOf(jobId)) expect(r.status).toBe('fired');
    // It fired inside the range, not before the start.
    const got = deliveredOf(p, jobId);
    expect(nominals(got.map((d) => d.run)).sort((a, b) => a - b)).toEqual(expected);
    for (const d of got) expect(d.atWallMs).toBeGreaterThanOrEqual(startAt);
  });
});

describe('jitter', () => {
  // Why: jitter was only unit-tested as a function; nothing checked that runs
  // are made and fired with it, within its bound.
  it('every due time lies in [nominal, nominal + jitter], jitter is applied, and runs fire at their jittered time', async () => {
    const p = await start();
    const J = 500;
    const P = 100;
    const createdAt = Date.now();
    const jobId = await createJob(p, every(P, { jitterMs: J }));
    // Schedule makes the first window's occurrences (3 s); wait for ones the materialiser made too.
    await waitFor(async () => (await runsOf(jobId)).some((r) => r.nominal_at_ms! > createdAt + 3_000 + P), 5_000, 'occurrences made by the materialiser');
    await waitFor(() => deliveredOf(p, jobId).length >= 10, 5_000, '10 occurrences fired');

    const runs = await runsOf(jobId);
    expect(runs.length).toBeGreaterThanOrEqual(20);
    for (const r of runs) {
      expect(r.due_at_ms - r.nominal_at_ms!, `run ${r.id}`).toBeGreaterThanOrEqual(0);
      expect(r.due_at_ms - r.nominal_at_ms!, `run ${r.id}`).toBeLessThanOrEqual(J);
    }
    // Applied: a jitter is one of J + 1 = 501 whole-ms values, from a hash of
    // (random job id, nominal time). P(all N ≥ 20 are 0) = 501^−20 ≈ 1e-54;
    // P(all of ≥ 10 fired runs are 0) ≤ 501^−10 ≈ 1e-27.
    expect(runs.filter((r) => r.due_at_ms > r.nominal_at_ms!).length).toBeGreaterThan(0);
    const fired = deliveredOf(p, jobId);
    expect(fired.filter((d) => d.run.due_at_ms > d.run.nominal_at_ms!).length).toBeGreaterThan(0);
    // A run fires at its jittered due time, never at its earlier nominal time.
    for (const d of fired) expect(d.atWallMs, `run ${d.run.id}`).toBeGreaterThanOrEqual(d.run.due_at_ms);
  });
});

describe('overlap allow_all', () => {
  // Why: recurring.test.ts covers skip and the buffers; nothing failed if
  // allow_all held a run back like skip does.
  it('the next occurrences fire while the earlier runs are still running', async () => {
    const p = await start();
    const jobId = await createJob(p, every(300, { overlap: 'allow_all' }));
    const heldBack = async () => (await runsOf(jobId)).some((r) => r.status === 'skipped' || r.status === 'buffered');
    await waitFor(async () => deliveredOf(p, jobId).length >= 3 || (await heldBack()), 5_000, 'three occurrences fired (or one held back)');
    // None was held back, and all three are running at once: none was answered.
    const runs = await runsOf(jobId);
    expect(runs.filter((r) => r.status === 'skipped' || r.status === 'buffered')).toHaveLength(0);
    const got = deliveredOf(p, jobId).slice(0, 3);
    expect(got).toHaveLength(3);
    for (const d of got) expect(runs.find((r) => r.id === d.run.id)?.status).toBe('fired');
    // Consecutive occurrences: none was skipped between them.
    const ns = nominals(got.map((d) => d.run));
    expect(ns[1] - ns[0]).toBe(300);
    expect(ns[2] - ns[1]).toBe(300);
  });
});

describe('catch-up', () => {
  // Why: the existing catch-up tests use the default max_runs (100), so a
  // fire_all that ignored its cap passed them.
  it('fire_all after an outage fires exactly max_runs (the latest) and records the rest as missed; GetJob agrees', async () => {
    const p = partsFor(); // not owning the shard yet: nothing makes or fires this job's occurrences
    const newest = Date.now() - 5_000;
    const jobId = await createJob(p, everyMinuteThrough(newest, { windowMs: 10 * MINUTE, mode: 'fire_all', maxRuns: 3 }));
    expect(await runsOf(jobId)).toHaveLength(0); // its first occurrence is ~55 s away
    // The outage: 8 occurrences (newest − 7 min … newest) came and went with nobody owning the shard.
    await setNextFireAt(jobId, newest - 7 * MINUTE);
    await p.own([0]);
    // The first pass plans the 8 in one transaction: once 3 fired, the plan is whole.
    await waitFor(() => deliveredOf(p, jobId).length >= 3, 5_000, 'the caught-up occurrences fired');

    const runs = await runsOf(jobId);
    expect(nominals(runs)).toEqual([7, 6, 5, 4, 3, 2, 1, 0].map((k) => newest - k * MINUTE)); // each accounted for, once
    const missed = runs.filter((r) => r.status === 'missed');
    const fired = runs.filter((r) => r.status === 'fired');
    expect(nominals(missed)).toEqual([7, 6, 5, 4, 3].map((k) => newest - k * MINUTE));
    expect(nominals(fired)).toEqual([2, 1, 0].map((k) => newest - k * MINUTE)); // the latest max_runs
    expect(nominals(deliveredOf(p, jobId).map((d) => d.run)).sort((a, b) => a - b)).toEqual(nominals(fired));
    expect(runs.filter((r) => r.status === 'scheduled')).toHaveLength(0); // nothing more of the outage can fire

    const { job } = await p.scheduling.getJob(jobId);
    expect(job.missed_count).toBe(5);
    expect(job.next_fire_at_ms).toBe(newest + MINUTE);
    const { counts } = await p.recurring.detail(jobId, job);
    expect(counts).toMatchObject({ fired: 3, missed: 5, skipped: 0, scheduled: 0 });
  });

  // Why: only the pause-on-failure test resumes with catch-up, and it checks
  // no more than "fires again"; no test counted what a catch-up resume fires and misses.
  it.each([
    { mode: 'fire_all' as const, firedCount: 4 },
    { mode: 'fire_once' as const, firedCount: 1 },
  ])('resume with catch-up ($mode): the paused occurrences within the window fire ($firedCount), older ones are missed', async ({ mode, firedCount }) => {
    const p = await start();
    const newest = Date.now() - 5_000;
    // A 3.5 min window: of 8 overdue occurrences (newest − 7 min … newest) the 4 latest are within it,
    // with 25 s of margin on either side of its edge.
    const jobId = await createJob(p, everyMinuteThrough(newest, { windowMs: 3.5 * MINUTE, mode, maxRuns: 100 }));
    const paused = await p.recurring.pause(jobId, 'maintenance');
    expect(paused.job.status).toBe('paused');
    // A paused job's next_fire_at stays where the pause left it (the materialiser
    // takes only active jobs): moved back to newest − 7 min, this is a job paused 7 minutes ago.
    await setNextFireAt(jobId, newest - 7 * MINUTE);
    await p.recurring.resume(jobId, true);

    const all = [7, 6, 5, 4, 3, 2, 1, 0].map((k) => newest - k * MINUTE);
    await waitFor(() => deliveredOf(p, jobId).length >= firedCount, 5_000, 'the caught-up occurrences fired');
    const runs = await runsOf(jobId);
    expect(nominals(runs)).toEqual(all);
    const fired = runs.filter((r) => r.status === 'fired');
    const missed = runs.filter((r) => r.status === 'missed');
    expect(nominals(fired)).toEqual(all.slice(8 - firedCount)); // the latest
    expect(nominals(missed)).toEqual(all.slice(0, 8 - firedCount));
    expect(nominals(deliveredOf(p, jobId).map((d) => d.run)).sort((a, b) => a - b)).toEqual(nominals(fired));

    const { job } = await p.scheduling.getJob(jobId);
    expect(job.status).toBe('active');
    expect(job.missed_count).toBe(8 - firedCount);
    expect(job.next_fire_at_ms).toBe(newest + MINUTE);
    const { counts } = await p.recurring.detail(jobId, job);
    expect(counts).toMatchObject({ fired: firedCount, missed: 8 - firedCount, scheduled: 0 });
  });
});

describe('catch-up tolerance', () => {
  // Why: the README's rule — "an occurrence found already overdue by more
  // than a second when it is made (every daemon was down, the shard had no
  // owner, or the job was resumed with catch-up) follows the job's catch-up
  // rule" — holds for the materialiser (1 s tolerance); nothing checked that a
  // resume, which makes the occurrences itself, applies the same second.
  it('resume with catch-up: an occurrence less than a second late fires on time, outside the catch-up rule', async () => {
    const p = await start();
    const now = Date.now();
    // Every minute; the newest occurrence 500 ms before the resume: late, but by less than a second.
    const newest = now - 500;
    const jobId = await createJob(p, everyMinuteThrough(newest, { windowMs: 3.5 * MINUTE, mode: 'fire_once', maxRuns: 100 }));
    await p.recurring.pause(jobId, 'maintenance');
    await setNextFireAt(jobId, newest - 7 * MINUTE); // as if paused 7 minutes ago
    // The resume's clock pinned at `now` (the verbs of the same engine, on a clock of the test's): exact, however slow the machine.
    const verbs = new RecurringService({ db: db.pool, shardCount: 1, router: p.engine.router, wallNow: () => now, forgetRun: (id) => p.engine.forget(id) });
    await verbs.resume(jobId, true);

    const all = [7, 6, 5, 4, 3, 2, 1, 0].map((k) => newest - k * MINUTE);
    // fire_once coalesces the occurrences overdue by more than a second into the latest of them (newest − 1 min);
    // `newest` is on time and fires as well. The 6 before are missed.
    const runs = await runsOf(jobId);
    expect(nominals(runs)).toEqual(all);
    expect(nominals(runs.filter((r) => r.status === 'missed'))).toEqual(all.slice(0, 6));
    expect(nominals(runs.filter((r) => r.status !== 'missed'))).toEqual(all.slice(6));
    await waitFor(() => deliveredOf(p, jobId).length >= 2, 5_000, 'the caught-up and the on-time occurrence fired');
    expect((await p.scheduling.getJob(jobId)).job.missed_count).toBe(6);
  });
});

describe('GetJob counts', () => {
  // Why: GetJob's counts were only checked as "> 0"; a count taken from the
  // 10 latest runs GetJob lists, or from the wrong status, passed.
  it('skipped, fired and completed are the numbers of such runs (more than the 10 runs GetJob lists)', async () => {
    const p = await start();
    const jobId = await createJob(p, every(100, { overlap: 'skip' }));
    await waitFor(() => deliveredOf(p, jobId).length === 1, 5_000, 'first fired');
    // The first run is never answered: every occurrence after it is skipped.
    await waitFor(async () => (await runsOf(jobId)).filter((r) => r.status === 'skipped').length >= 12, 5_000, '12 skipped');
    // Pausing takes back the occurrences not fired: no run can change any more.
    await p.recurring.pause(jobId, 'count');
    const runs = await runsOf(jobId);
    const skipped = runs.filter((r) => r.status === 'skipped').length;
    expect(skipped).toBeGreaterThanOrEqual(12);
    expect(runs.filter((r) => r.status === 'scheduled' || r.status === 'buffered')).toHaveLength(0);
    expect(deliveredOf(p, jobId)).toHaveLength(1);

    const { job } = await p.scheduling.getJob(jobId);
    let d = await p.recurring.detail(jobId, job);
    expect(d.runs).toHaveLength(10); // GetJob lists only the latest 10 …
    expect(d.counts).toEqual({ fired: 1, completed: 0, dead: 0, skipped, scheduled: 0, missed: 0 }); // … but counts them all
    // Skipped occurrences are not missed ones, and are not fired.
    expect(job.missed_count).toBe(0);

    await p.engine.answers.complete([refOf(p, deliveredOf(p, jobId)[0].run.id)]);
    d = await p.recurring.detail(jobId, (await p.scheduling.getJob(jobId)).job);
    expect(d.counts).toEqual({ fired: 1, completed: 1, dead: 0, skipped, scheduled: 0, missed: 0 });
  });
  // Why: `fired` counted runs by their status now, so a run handed to a
  // worker and then cancelled (CancelJob, cancel_other) fell out of it.
  it('fired counts a run that was handed out and then cancelled', async () => {
    const p = await start();
    const jobId = await createJob(p, every(200, { overlap: 'skip' }));
    await waitFor(() => deliveredOf(p, jobId).length === 1, 5_000, 'first fired');
    const run = deliveredOf(p, jobId)[0].run;
    await p.scheduling.cancelJob(jobId, () => undefined);
    // The worker, asked to stop, answers: the run ends cancelled.
    expect((await p.engine.answers.fail(refOf(p, run.id), false, 'stopped')).status).toBe('cancelled');
    const runs = await runsOf(jobId);
    expect(runs.find((r) => r.id === run.id)?.status).toBe('cancelled');
    const d = await p.recurring.detail(jobId, (await p.scheduling.getJob(jobId)).job);
    expect(d.counts).toMatchObject({ fired: 1, completed: 0, dead: 0, scheduled: 0 });
  });
});

describe('retries', () => {
  // Why: retries were tested on one-shot jobs; nothing checked that a retried
  // occurrence stays the same occurrence, nor that it leaves the schedule alone.
  it('a retryable failure is retried as attempt 2 of the same occurrence, and the next occurrence comes on schedule', async () => {
    const p = await start();
    const P = 500;
    // allow_all: a retry counts as running, so under skip it would (by design) hold the next occurrence back.
    const jobId = await createJob(p, every(P, { overlap: 'allow_all' }), { maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 100 });
    await waitFor(() => deliveredOf(p, jobId).length >= 1, 5_000, 'first occurrence fired');
    const first = deliveredOf(p, jobId)[0].run;
    expect(first.attempt).toBe(1);

    const out = await p.engine.answers.fail(refOf(p, first.id), true, 'transient');
    expect(out.status).toBe('failed');
    expect(out.retry).not.toBeNull();
    await waitFor(() => p.deliveries.some((d) => d.run.id === out.retry!.runId), 5_000, 'the retry fired');
    const retry = p.deliveries.find((d) => d.run.id === out.retry!.runId)!.run;
    // The same occurrence: its nominal time, its idempotency key, its origin.
    expect(retry).toMatchObject({
      job_id: jobId,
      attempt: 2,
      nominal_at_ms: first.nominal_at_ms,
      idempotency_key: first.idempotency_key,
      origin: 'schedule',
    });
    expect(retry.idempotency_key).toBe(`${jobId}:${first.nominal_at_ms}`);

    // The next occurrence: the following nominal time, attempt 1, on time, while the retry still runs.
    const next = () => deliveredOf(p, jobId).find((d) => d.run.attempt === 1 && d.run.nominal_at_ms === first.nominal_at_ms! + P);
    const held = async () => (await runsOf(jobId)).some((r) => r.status === 'skipped' || r.status === 'buffered');
    await waitFor(async () => next() !== undefined || (await held()), 5_000, 'the next occurrence fired (or was held back)');
    expect(await held()).toBe(false);
    expect(next()!.run.origin).toBe('schedule');
    expect(next()!.atWallMs - next()!.run.due_at_ms).toBeLessThan(P);

    const runs = await runsOf(jobId);
    const ofFirst = runs.filter((r) => r.nominal_at_ms === first.nominal_at_ms);
    expect(ofFirst.map((r) => [r.attempt, r.status])).toEqual([
      [1, 'failed'],
      [2, 'fired'],
    ]);
    expect(ofFirst[0].error).toBe('transient');
    expect(runs.filter((r) => r.status === 'skipped' || r.status === 'missed')).toHaveLength(0);
  });
});
