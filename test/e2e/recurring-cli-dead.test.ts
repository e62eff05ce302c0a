/**
 * End to end, against a real daemon, Postgres and Redis:
 *
 * - the built CLI's `schedule --cron … --tz …` and `schedule --every …
 *   --phase …` success paths: the job GetJob returns has that rule, and its
 *   next fire times are what the rule means — for the cron job computed here
 *   independently (Intl, minute by minute) across a Europe/Paris DST change;
 * - ListDeadRuns' filters (job, since_ms/until_ms) and paging (every dead
 *   run exactly once across pages, newest death first);
 * - a run going dead is observable: `timelane_runs_failed_total{outcome="dead"}`
 *   on /metrics rises by exactly the runs that died (a retried attempt counts
 *   as `retry`), and the daemon logs one dead-letter warning per dead run,
 *   naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError, type RunInfo, type TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import {
  closeClient,
  collectRuns,
  daemonProblems,
  freePort,
  openClient,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
  runCli,
  type CliResult,
} from '../helpers/e2e.js';

const SHARDS = 4;
const SECOND = 1_000;
const MINUTE = 60_000;
const DAY = 86_400_000;
const DEAD_QUEUE = 'cd-dead';
const METRICS_QUEUE = 'cd-metrics';
const DEAD_LOG = 'run is dead (dead letter): no retry left, or not retryable';

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker;
let metricsUrl = '';

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', 'recurring-cli-dead', '--redis-prefix', prefix, '--metrics-address', `127.0.0.1:${metricsPort}`],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  // Every run it receives fails: retryable (a plain Error) unless the payload says otherwise.
  worker = collectRuns({
    address: daemon.address,
    queues: [DEAD_QUEUE, METRICS_QUEUE],
    workerId: 'cd-worker',
    handler: (run) => {
      const { fail } = JSON.parse(run.payload.toString()) as { fail: 'retryable' | 'not-retryable' };
      throw fail === 'not-retryable' ? new NonRetryableError(`cd: refused (${run.runId})`) : new Error(`cd: boom (${run.runId})`);
    },
  });
});

afterAll(async () => {
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

// ------------------------------------------------------------- helpers ---


/** Runs the built CLI against the test daemon. */
const cli = (...args: string[]): Promise<CliResult> => runCli(daemon!.address, args);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

function diffs(values: readonly number[]): number[] {
  return values.slice(1).map((v, i) => v - values[i]);
}

const PARIS = 'Europe/Paris';
const parisParts = new Intl.DateTimeFormat('en-GB', {
  timeZone: PARIS,
  hourCycle: 'h23',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'longOffset',
});

/** Wall-clock hour, minute, second and UTC offset ("GMT+01:00") of an instant in Europe/Paris. */
function inParis(ms: number): { hour: number; minute: number; second: number; offset: string } {
  const p = Object.fromEntries(parisParts.formatToParts(ms).map((x) => [x.type, x.value]));
  return { hour: Number(p.hour), minute: Number(p.minute), second: Number(p.second), offset: p.timeZoneName };
}

/** The first UTC midnight, at least `minDays` days from `fromMs`, of a day whose noon has another Paris offset than the day before's. */
function nextParisOffsetChange(fromMs: number, minDays: number): number {
  let day = Math.floor(fromMs / DAY) * DAY + minDays * DAY;
  while (inParis(day - DAY / 2).offset === inParis(day + DAY / 2).offset) day += DAY;
  return day;
}

/**
 * The first `n` instants at or after `fromMs` whose Paris wall clock reads
 * hh:mm:ss — found by asking Intl about every minute (plus `ss`), so it owes
 * nothing to the daemon's cron parsing or its offset arithmetic.
 */
function parisDailyTimes(hh: number, mm: number, ss: number, fromMs: number, n: number): number[] {
  const out: number[] = [];
  for (let t = Math.floor(fromMs / MINUTE) * MINUTE + ss * SECOND; out.length < n; t += MINUTE) {
    if (t < fromMs) continue;
    const p = inParis(t);
    if (p.hour === hh && p.minute === mm && p.second === ss) out.push(t);
  }
  return out;
}

async function scrape(): Promise<string> {
  const res = await fetch(metricsUrl);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one exact series (`name{labels}`), 0 when absent. */
function series(body: string, nameAndLabels: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${nameAndLabels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const deadTotal = (body: string): number => series(body, 'timelane_runs_failed_total{outcome="dead"}');
const retryTotal = (body: string): number => series(body, 'timelane_runs_failed_total{outcome="retry"}');

/** Resolves true once every run is dead (read with GetRun, not the listing under test). */
function waitForDead(runIds: readonly string[], timeoutMs = 10_000): Promise<boolean> {
  return waitUntil(async () => (await Promise.all(runIds.map((id) => client.getRun(id)))).every((r) => r.status === 'dead'), timeoutMs, 50);
}

/** One-shot jobs on `queue`, due now, failing as `fail` says; their run ids. */
async function doomed(queue: string, n: number, maxAttempts: number, fail: 'retryable' | 'not-retryable' = 'retryable'): Promise<string[]> {
  const retry = { maxAttempts, initialBackoffMs: 50, maxBackoffMs: 50 };
  const made = await client.scheduleBatch(Array.from({ length: n }, () => ({ queue, payload: { fail }, retry })));
  return made.map((m) => m.run.id);
}

/** Every page of a ListDeadRuns listing, in order. */
async function allPages(filter: Parameters<TimelaneClient['listDeadRuns']>[0], pageSize: number): Promise<{ pages: RunInfo[][]; lastToken: string }> {
  const pages: RunInfo[][] = [];
  let token = '';
  do {
    const page = await client.listDeadRuns({ ...filter, pageSize, pageToken: token || undefined });
    expect(page.runs.length).toBeLessThanOrEqual(pageSize);
    pages.push(page.runs);
    token = page.nextPageToken;
  } while (token && pages.length < 100);
  return { pages, lastToken: token };
}

const ids = (runs: readonly RunInfo[]): string[] => runs.map((r) => r.id);
const sorted = (xs: readonly string[]): string[] => [...xs].sort();

// ----------------------------------------------------------------- CLI ---

describe('CLI schedule, success paths', () => {
  it("--cron '30 0 9 * * *' --tz Europe/Paris: GetJob has that rule and zone; the next fire times are 09:00:30 in Paris, across a DST change", async () => {
    // Start 4 days before the next change of Paris' offset: the 10 next fire
    // times then straddle it (09:00:30 local is 08:00:30Z in winter, 07:00:30Z in summer).
    const change = nextParisOffsetChange(Date.now(), 5);
    const start = change - 4 * DAY;
    const res = await cli('schedule', '--queue', 'cd-cli', '--cron', '30 0 9 * * *', '--tz', PARIS, '--start', new Date(start).toISOString());
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^kind {3}cron$/m);
    // Days ahead: no run yet, the next occurrence is shown instead.
    expect(res.stdout).toMatch(/^run {4}- \(the first occurrence is made nearer its time\)$/m);
    const jobId = UUID.exec(res.stdout)![0];

    const { job, nextFireTimesMs } = await client.getJob(jobId);
    expect(job.kind).toBe('cron');
    expect(job.status).toBe('active');
    expect(job.queue).toBe('cd-cli');
    expect(job.recurrence!.cron).toEqual({ expression: '30 0 9 * * *', timeZone: PARIS, dstGap: 'shift', dstRepeat: 'once' });
    expect(job.recurrence!.interval).toBeNull();
    expect(job.recurrence!.startAtMs).toBe(start);

    const expected = parisDailyTimes(9, 0, 30, start, 10);
    // The expectation itself spans the change: both offsets, one day 23 or 25 hours long.
    expect(new Set(expected.map((t) => new Date(t).getUTCHours())).size).toBe(2);
    expect(diffs(expected).filter((d) => d !== DAY)).toHaveLength(1);
    expect(nextFireTimesMs.map((t) => new Date(t).toISOString())).toEqual(expected.map((t) => new Date(t).toISOString()));
    expect(job.nextFireAtMs).toBe(expected[0]);

    // `timelane job` shows the rule with its zone.
    const shown = await cli('job', jobId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^rule\s+cron 30 0 9 \* \* \* \(Europe\/Paris\)$/m);
    expect(shown.stdout).toMatch(/^time zone\s+Europe\/Paris$/m);
    await client.cancelJob(jobId);
  });

  it('--every 15m --phase 5m: GetJob has that interval; the next fire times are 5m past each epoch-aligned quarter hour, 15m apart', async () => {
    const EVERY = 15 * MINUTE;
    const PHASE = 5 * MINUTE;
    const asked = Date.now();
    const res = await cli('schedule', '--queue', 'cd-cli', '--every', '15m', '--phase', '5m', '--payload', 'quarterly');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^kind {3}interval$/m);
    const jobId = UUID.exec(res.stdout)![0];

    const { job, nextFireTimesMs } = await client.getJob(jobId);
    const read = Date.now();
    expect(job.kind).toBe('interval');
    expect(job.status).toBe('active');
    expect(job.recurrence!.interval).toEqual({ everyMs: EVERY, phaseMs: PHASE });
    expect(job.recurrence!.cron).toBeNull();
    // Occurrences are phase + k·15m after the epoch: the first one after an instant.
    const nextAfter = (t: number) => Math.floor((t - PHASE) / EVERY) * EVERY + PHASE + EVERY;
    expect(nextFireTimesMs).toHaveLength(10);
    expect(nextFireTimesMs.map((t) => t % EVERY)).toEqual(Array(10).fill(PHASE));
    expect(diffs(nextFireTimesMs)).toEqual(Array(9).fill(EVERY));
    // Not before the request; at most one period after the read.
    expect(nextFireTimesMs[0]).toBeGreaterThanOrEqual(asked);
    expect(nextFireTimesMs[0]).toBeLessThanOrEqual(nextAfter(read));
    // Exactly the next occurrence after the request, unless one fell due (and fired) between the request and the read.
    if (nextAfter(asked) === nextAfter(read)) expect(nextFireTimesMs[0]).toBe(nextAfter(asked));
    // When the job fires next is one of them: its first run waiting (within the daemon's window) or the next occurrence not made yet.
    expect(nextFireTimesMs.slice(0, 2)).toContain(job.nextFireAtMs);

    const shown = await cli('job', jobId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^rule\s+every 15m at \+5m$/m);
    await client.cancelJob(jobId);
  });
});

// ------------------------------------------------------ ListDeadRuns ---

describe('CLI runs --due-from/--due-to, and queues', () => {
  it('runs by due range prints exactly the runs due in it; queues lists the queue', async () => {
    const base = Date.now() + 3_600_000;
    const made = await client.scheduleBatch(Array.from({ length: 6 }, (_, k) => ({ queue: 'cd-due', at: base + k * 1_000 })));
    const res = await cli('runs', '--queue', 'cd-due', '--due-from', new Date(base + 1_000).toISOString(), '--due-to', String(base + 3_000), '--json');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect((JSON.parse(res.stdout) as { runs: { id: string }[] }).runs.map((r) => r.id)).toEqual(made.slice(1, 4).map((m) => m.run.id));
    const bad = await cli('runs', '--due-from', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--due-from/);
    const queues = await cli('queues');
    expect(queues.code).toBe(0);
    expect(queues.stdout.split('\n')).toContain('cd-due');
  });
});

describe('ListDeadRuns: filters and paging', () => {
  let jobId = '';
  /** Dead runs made before `boundary`, then after it. */
  const before: string[] = [];
  const after: string[] = [];
  /** Of those, the runs of the recurring job. */
  const ofJob: string[] = [];
  let startedAt = 0;
  let boundary = 0;

  /** `triggers` forced triggers of the recurring job (each one run, due now) and `oneShots` one-shot jobs: runs that die, read back dead. */
  async function wave(into: string[], triggers: number, oneShots: number): Promise<void> {
    const triggered: string[] = [];
    for (let i = 0; i < triggers; i++) triggered.push((await client.triggerJob(jobId, { overrideOverlap: true })).id);
    const once = await doomed(DEAD_QUEUE, oneShots, 1);
    expect(await waitForDead([...triggered, ...once])).toBe(true);
    into.push(...triggered, ...once);
    ofJob.push(...triggered);
  }

  beforeAll(async () => {
    // A recurring job that never fires by itself before the test ends (New Year), one attempt per run.
    const rec = await client.scheduleRecurring({ queue: DEAD_QUEUE, payload: { fail: 'retryable' }, retry: { maxAttempts: 1 }, recurrence: { cron: '0 0 1 1 *' } });
    jobId = rec.job.id;
    startedAt = Date.now();
    await wave(before, 3, 3);
    // Every death so far committed before this instant (read back dead above); every later one starts after it.
    boundary = Date.now() + 1;
    expect(await waitUntil(() => Date.now() > boundary, 1_000, 1)).toBe(true);
    await wave(after, 2, 2);
  });

  it('the listing holds exactly the dead runs, newest death first, each with its error', async () => {
    const { runs, nextPageToken } = await client.listDeadRuns({ queue: DEAD_QUEUE, pageSize: 1000 });
    expect(nextPageToken).toBe('');
    expect(sorted(ids(runs))).toEqual(sorted([...before, ...after]));
    expect(runs.every((r) => r.status === 'dead' && r.attempt === 1 && r.error.startsWith('cd: boom'))).toBe(true);
    const finished = runs.map((r) => r.finishedAtMs);
    expect(diffs(finished).every((d) => d <= 0), `finished_at_ms ${finished.join(',')}`).toBe(true);
    // The later wave died later: it comes first.
    expect(sorted(ids(runs.slice(0, after.length)))).toEqual(sorted(after));
  });

  it('job_id: only that job’s dead runs', async () => {
    const { runs } = await client.listDeadRuns({ jobId, pageSize: 1000 });
    expect(sorted(ids(runs))).toEqual(sorted(ofJob));
    expect(runs.every((r) => r.jobId === jobId)).toBe(true);
    // With the queue too, and with a time range.
    expect(sorted(ids((await client.listDeadRuns({ jobId, queue: DEAD_QUEUE })).runs))).toEqual(sorted(ofJob));
    expect(sorted(ids((await client.listDeadRuns({ jobId, since: boundary })).runs))).toEqual(sorted(ofJob.filter((id) => after.includes(id))));
    // A job with no dead run: nothing.
    const quiet = await client.scheduleRecurring({ queue: DEAD_QUEUE, recurrence: { cron: '0 0 1 1 *' } });
    expect((await client.listDeadRuns({ jobId: quiet.job.id })).runs).toEqual([]);
    await client.cancelJob(quiet.job.id);
  });

  it('since_ms (died at or after) and until_ms (died before) split the deaths at an instant', async () => {
    const list = async (range: { since?: number; until?: number }) => sorted(ids((await client.listDeadRuns({ queue: DEAD_QUEUE, ...range, pageSize: 1000 })).runs));
    expect(await list({ since: boundary })).toEqual(sorted(after));
    expect(await list({ until: boundary })).toEqual(sorted(before));
    expect(await list({ since: startedAt, until: boundary })).toEqual(sorted(before));
    expect(await list({ since: startedAt })).toEqual(sorted([...before, ...after]));
    expect(await list({ until: startedAt })).toEqual([]);
    expect(await list({ since: Date.now() + 1 })).toEqual([]);
    // A run's own death time (finished_at_ms) is "at", not "before": since it includes the run, until it excludes it.
    const { runs } = await client.listDeadRuns({ queue: DEAD_QUEUE, pageSize: 1000 });
    for (const r of runs) {
      const at = r.finishedAtMs;
      const around = async (range: { since?: number; until?: number }) => ids((await client.listDeadRuns({ queue: DEAD_QUEUE, ...range })).runs);
      expect(await around({ since: at, until: at + 1 }), `run ${r.id} died at ${at}`).toContain(r.id);
      expect(await around({ until: at }), `run ${r.id} died at ${at}`).not.toContain(r.id);
      expect(await around({ since: at + 1 }), `run ${r.id} died at ${at}`).not.toContain(r.id);
    }
  });

  it.each([1, 3, 4])('pages of %i: every dead run exactly once, in the order of one long page; the last token is empty', async (pageSize) => {
    const whole = (await client.listDeadRuns({ queue: DEAD_QUEUE, pageSize: 1000 })).runs;
    const { pages, lastToken } = await allPages({ queue: DEAD_QUEUE }, pageSize);
    expect(lastToken).toBe('');
    const paged = pages.flat();
    expect(ids(paged)).toEqual(ids(whole));
    expect(new Set(ids(paged)).size).toBe(before.length + after.length);
    // Full pages but the last: no short page before the end.
    expect(pages.slice(0, -1).every((p) => p.length === pageSize)).toBe(true);
  });

  it('pages combine with the filters: job_id and since_ms', async () => {
    const byJob = (await allPages({ jobId }, 2)).pages.flat();
    expect(sorted(ids(byJob))).toEqual(sorted(ofJob));
    expect(new Set(ids(byJob)).size).toBe(ofJob.length);
    const recent = (await allPages({ queue: DEAD_QUEUE, since: boundary }, 1)).pages.flat();
    expect(ids(recent)).toEqual(ids((await client.listDeadRuns({ queue: DEAD_QUEUE, since: boundary })).runs));
    expect(sorted(ids(recent))).toEqual(sorted(after));
  });
});

// ------------------------------------------------------- observability ---

describe('a run going dead is observable', () => {
  /** /metrics before this block's runs died. */
  let base = '';
  /** This block's dead runs: two out of attempts at once, one not retryable though it had attempts left, one dead on its second attempt. */
  let dead: string[] = [];
  /** The first attempt of the run that died on its second. */
  let retried = '';

  beforeAll(async () => {
    // The deaths of the blocks above are counted right after they commit: let the last ones land first.
    const known = (await client.listDeadRuns({ pageSize: 1000 })).runs.length;
    await waitUntil(async () => deadTotal(await scrape()) >= known, 5_000);
    base = await scrape();

    const once = await doomed(METRICS_QUEUE, 2, 1);
    const refused = await doomed(METRICS_QUEUE, 1, 3, 'not-retryable');
    [retried] = await doomed(METRICS_QUEUE, 1, 2);
    let second: RunInfo | undefined;
    const secondDied = async () => (second = (await client.getRunWithAttempts(retried)).attempts.find((a) => a.attempt === 2))?.status === 'dead';
    expect(await waitUntil(secondDied, 10_000)).toBe(true);
    expect(await waitForDead([...once, ...refused])).toBe(true);
    dead = [...once, ...refused, second!.id];
    expect((await client.getRun(retried)).status).toBe('failed');
    expect(sorted(ids((await client.listDeadRuns({ queue: METRICS_QUEUE })).runs))).toEqual(sorted(dead));
  });

  it('timelane_runs_failed_total{outcome="dead"} rises by exactly the runs that died; the retried attempt counts as "retry"', async () => {
    let now = '';
    expect(await waitUntil(async () => deadTotal((now = await scrape())) >= deadTotal(base) + dead.length, 5_000)).toBe(true);
    expect(deadTotal(now) - deadTotal(base)).toBe(dead.length);
    expect(retryTotal(now) - retryTotal(base)).toBe(1);
    // Over the whole file: one count per dead run there is, no more.
    expect(deadTotal(await scrape())).toBe((await client.listDeadRuns({ pageSize: 1000 })).runs.length);
  });

  it('the daemon logs one dead-letter warning per dead run, naming the run, its worker and its error', async () => {
    const { runs: all } = await client.listDeadRuns({ pageSize: 1000 });
    expect(all.length).toBeGreaterThan(dead.length);
    const lines = () => daemon!.logs.filter((l) => l.msg === DEAD_LOG);
    // Each death is logged right after its commit: wait for the last ones.
    expect(await waitUntil(() => lines().length >= all.length, 5_000)).toBe(true);
    expect(lines()).toHaveLength(all.length);
    expect(sorted(lines().map((l) => String(l.runId)))).toEqual(sorted(ids(all)));
    for (const l of lines()) {
      const run = all.find((r) => r.id === String(l.runId))!;
      expect(l.level).toBe(40); // warn
      expect(l.workerId).toBe('cd-worker');
      expect(l.error).toBe(run.error);
      expect(String(l.error)).toContain(`(${run.id})`);
    }
    // The retried first attempt is not a dead letter.
    expect(lines().some((l) => String(l.runId) === retried)).toBe(false);
  });
});

describe('daemon health', () => {
  it('logged no errors', () => {
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});
