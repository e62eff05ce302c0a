/**
 * The web console in a real headless Chromium against a real daemon with
 * real data (test/helpers/console-fixture.ts): each page shows what a
 * person would look for, charts are drawn with data, and the actions an
 * operator takes (pause a job, replay a dead letter, rebalance) take effect
 * through the API. Times are UTC and say so, whatever the browser's zone; a
 * malformed address is a notice, not a blank console; dead letters come a
 * page at a time, and a replay acts only on selected runs still shown.
 * Screenshots go to test/browser/screenshots/ (gitignored). Waits are on
 * selectors and conditions, never fixed sleeps.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBrowser, HAS_CHROMIUM, launchBrowser, screenshot, SKIP_MESSAGE } from '../helpers/browser.js';
import {
  COMPLETED_ONE_SHOTS,
  CRON_QUEUE,
  DEAD_ERROR,
  LATER_QUEUE,
  LATER_RUNS,
  MEMBER,
  SHARDS,
  startConsoleFixture,
  WORK_QUEUE,
  type ConsoleFixture,
} from '../helpers/console-fixture.js';
import { waitUntil } from '../helpers/e2e.js';

/** A queue nobody works: its runs stay scheduled. */
const IDLE_QUEUE = 'console-idle';
/** Rows a page of the Dead letters page holds (console/web/pages/dead.js). */
const DEAD_PAGE_SIZE = 200;

if (!HAS_CHROMIUM) console.warn(SKIP_MESSAGE);

/** "2026-11-25T17:31" for an instant, in UTC: what a datetime-local input holds. */
const utcMinute = (ms: number): string => new Date(ms).toISOString().slice(0, 16);

describe.skipIf(!HAS_CHROMIUM)('web console in headless Chromium', () => {
  let fx: ConsoleFixture;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [fx, browser] = await Promise.all([startConsoleFixture(), launchBrowser()]);
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(`${msg.text()} (${msg.location().url})`);
    });
  });

  afterAll(async () => {
    await closeBrowser(browser);
    await fx?.stop();
    expect(pageErrors).toEqual([]);
  });

  const open = (hash: string): Promise<unknown> => page.goto(`${fx.consoleUrl}#/${hash}`);
  /** Loads the console afresh at `hash` (open() to the address already shown changes nothing). */
  const openFresh = async (hash: string): Promise<unknown> => {
    await page.goto('about:blank');
    return open(hash);
  };
  /** A page like `page`, whose errors also fail the file. */
  const watchedPage = async (context: BrowserContext): Promise<Page> => {
    const p = await context.newPage();
    p.on('pageerror', (err) => pageErrors.push(String(err)));
    p.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(`${msg.text()} (${msg.location().url})`);
    });
    return p;
  };
  /** Schedules `count` runs in the fixture's work queue that its worker fails for good; resolves once the API lists them all as dead. */
  const makeDeadRuns = async (count: number): Promise<string[]> => {
    const made = await fx.client.scheduleBatch(Array.from({ length: count }, () => ({ queue: WORK_QUEUE, payload: 'fail', retry: { maxAttempts: 1 } })));
    const ids = made.map((m) => m.run.id);
    const died = await waitUntil(async () => {
      const dead = new Set((await fx.client.listDeadRuns({ queue: WORK_QUEUE, pageSize: 1000 })).runs.map((r) => r.id));
      return ids.every((id) => dead.has(id));
    }, 30_000, 200);
    if (!died) throw new Error(`the ${count} failing runs did not all become dead letters`);
    return ids;
  };
  /** Number of non-empty points a chart holds (its data-points attribute), once it is drawn. */
  const chartPoints = async (id: string): Promise<number> => {
    await page.waitForSelector(`[data-testid=${id}] canvas`);
    return Number(await page.getAttribute(`[data-testid=${id}]`, 'data-points'));
  };
  /** True when a canvas has pixels of more than one colour (something is drawn). */
  const canvasDrawn = (id: string): Promise<boolean> =>
    page.$eval(`[data-testid=${id}] canvas`, (c) => {
      const canvas = c as HTMLCanvasElement;
      const ctx = canvas.getContext('2d');
      if (!ctx || canvas.width === 0 || canvas.height === 0) return false;
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 4; i < px.length; i += 4) if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2] || px[i + 3] !== px[3]) return true;
      return false;
    });

  it('overview: fires/s and lag charts with data, the lag histogram, runs due soon, the dead letter as a problem', async () => {
    await open('overview');
    await page.waitForSelector('h1:text("Overview")');
    // The ring buffer samples every second: wait until a sample saw the seeded fires.
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=chart-lag-histogram]')?.getAttribute('data-points')) > 0, undefined, { timeout: 15_000 });
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=chart-fires]')?.getAttribute('data-points')) > 0, undefined, { timeout: 15_000 });
    expect(await chartPoints('chart-fires')).toBeGreaterThan(0);
    expect(await chartPoints('chart-lag')).toBeGreaterThan(0);
    expect(await chartPoints('chart-lag-histogram')).toBeGreaterThan(0);
    expect(await chartPoints('chart-due')).toBeGreaterThan(0); // the runs due in 1.5, 2.5 and 3.5 minutes
    for (const id of ['chart-fires', 'chart-lag', 'chart-lag-histogram', 'chart-due']) expect(await canvasDrawn(id)).toBe(true);
    expect(await page.textContent('[data-testid=card-shards] .value')).toBe(`${SHARDS} / ${SHARDS}`);
    expect(await page.textContent('[data-testid=card-members] .value')).toBe('1');
    expect(await page.textContent('[data-testid=card-dead] .value')).toBe('1');
    expect(Number(await page.textContent('[data-testid=card-fired] .value'))).toBeGreaterThanOrEqual(COMPLETED_ONE_SHOTS);
    expect(Number(await page.textContent('[data-testid=card-workers] .value'))).toBe(1);
    const problems = await page.textContent('[data-testid=problems]');
    expect(problems).toContain('1 dead letter');
    expect(problems).not.toContain('without an owner');
    await screenshot(page, 'overview');
  });

  it('shards & members: the shard map and the member; rebalance runs and reports its outcome', async () => {
    await open('shards');
    await page.waitForSelector('[data-testid=shards] tbody tr');
    const rows = await page.$$eval('[data-testid=shards] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
    expect(rows.map((r) => Number(r[0]))).toEqual([0, 1, 2, 3]);
    for (const r of rows) expect(r[1]).toBe(MEMBER);
    expect(await page.textContent('[data-testid=members]')).toContain(MEMBER);
    expect(await page.textContent('[data-testid=members]')).toContain('serving this console');
    await page.click('[data-testid=rebalance]');
    await page.waitForSelector('[data-testid=operations] tbody tr:has-text("rebalance"):has-text("done")', { timeout: 20_000 });
    expect(await page.textContent('[data-testid=operations]')).toContain('0 moves, all landed');
    // Every shard still with its owner, as the API says.
    expect((await fx.client.listShards()).every((s) => s.owner === MEMBER)).toBe(true);
    await screenshot(page, 'shards');
  });

  it('queues: depth by status, the dead letter and the runs due later; workers connected', async () => {
    await open('queues');
    const work = `[data-testid=queues] tr[data-queue=${WORK_QUEUE}]`;
    await page.waitForSelector(work);
    const cell = async (queue: string, status: string): Promise<string> => (await page.textContent(`[data-testid=queues] tr[data-queue=${queue}] td[data-status=${status}]`))?.trim() ?? '';
    // "≥100" when the count reached its cap (the interval job keeps completing runs).
    expect(Number((await cell(WORK_QUEUE, 'completed')).replace('≥', ''))).toBeGreaterThanOrEqual(COMPLETED_ONE_SHOTS);
    expect(await cell(WORK_QUEUE, 'dead')).toBe('1');
    expect(await cell(LATER_QUEUE, 'scheduled')).toBe(String(LATER_RUNS));
    expect(await page.textContent(`${work} td:last-child`)).toBe('1');
    expect(await page.$(`[data-testid=queues] tr[data-queue=${CRON_QUEUE}]`)).not.toBeNull();
    await screenshot(page, 'queues');
  });

  it('runs: a search by queue and status lists the completed runs; a run shows its full history', async () => {
    await open(`runs?queue=${WORK_QUEUE}&status=completed`);
    await page.waitForSelector('[data-testid=runs] tbody tr');
    const listed = await page.$$eval('[data-testid=runs] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-run')));
    expect(listed.length).toBeGreaterThanOrEqual(COMPLETED_ONE_SHOTS);
    for (const id of fx.completedRunIds) expect(listed).toContain(id);
    expect(await page.textContent('[data-testid=run-count]')).toMatch(/^\d+ runs/);
    await screenshot(page, 'runs');

    // Search by id through the form: the run by id, whatever else is still filled in (the queue and status
    // of the last search are; the API refuses an id mixed with filters, so the page sends the id alone).
    await page.fill('input[name=id]', fx.deadRunId);
    await page.click('[data-testid=run-search] button[type=submit]');
    await page.waitForFunction((id) => {
      const rows = document.querySelectorAll('[data-testid=runs] tbody tr');
      return rows.length === 1 && rows[0].getAttribute('data-run') === id;
    }, fx.deadRunId);

    await page.click(`[data-testid=runs] tr[data-run="${fx.deadRunId}"] a[href^="#/runs/"]`);
    await page.waitForSelector('[data-testid=attempts] tbody tr');
    const history = await page.textContent('[data-testid=attempts]');
    expect(history).toContain(DEAD_ERROR);
    expect(history).toContain('dead');
    expect(await page.textContent('[data-testid=run-summary]')).toContain(WORK_QUEUE);
    await screenshot(page, 'run-history');
  });

  it('jobs: the cron job with its rule and next fire times; Pause pauses it (checked through the API)', async () => {
    await open('jobs');
    await page.waitForSelector(`[data-testid=jobs] tr[data-job="${fx.cronJobId}"]`);
    expect(await page.textContent(`[data-testid=jobs] tr[data-job="${fx.cronJobId}"]`)).toContain('cron "0 3 * * *" Europe/Paris');
    expect(await page.$(`[data-testid=jobs] tr[data-job="${fx.intervalJobId}"]`)).not.toBeNull();
    // Short ids show an id's end: its start is its creation time (UUIDv7), the same for jobs made in one minute.
    const shown = await Promise.all([fx.cronJobId, fx.intervalJobId].map((id) => page.textContent(`[data-testid=jobs] tr[data-job="${id}"] td.mono a`)));
    expect(shown).toEqual([`…${fx.cronJobId.slice(-8)}`, `…${fx.intervalJobId.slice(-8)}`]);
    await screenshot(page, 'jobs');

    await open(`jobs/${fx.cronJobId}`);
    await page.waitForSelector('[data-testid=next-fires] li');
    expect(await page.$$eval('[data-testid=next-fires] li', (li) => li.length)).toBe(10);
    expect(await page.textContent('[data-testid=job-spec]')).toContain('Europe/Paris');
    await page.click('button:text("Pause")');
    await page.waitForSelector('[data-testid=job-status] .badge.paused');
    await page.waitForSelector('button:text("Resume")');
    expect((await fx.client.getJob(fx.cronJobId)).job.status).toBe('paused');
    await screenshot(page, 'job-paused');
  });

  it('dead letters: the dead run with its error; Replay makes a new run of it (checked through the API)', async () => {
    await open('dead');
    const row = `[data-testid=dead] tr[data-run="${fx.deadRunId}"]`;
    await page.waitForSelector(row);
    expect(await page.textContent(row)).toContain(DEAD_ERROR);
    await page.check(`${row} input[type=checkbox]`);
    await page.click('[data-testid=replay]');
    await page.waitForSelector('[data-testid=replay-outcome]');
    expect(await page.textContent('[data-testid=replay-outcome]')).toContain('Replayed 1');
    await screenshot(page, 'dead-letters');
    // The replay is a new run of the same job that names the dead one; it fires (and dies again: same payload).
    const replayed = await waitUntil(async () => (await fx.client.listRuns({ jobId: fx.deadJobId })).runs.some((r) => r.replayOf === fx.deadRunId), 5_000, 100);
    expect(replayed).toBe(true);
  });

  it('a malformed address (#/jobs/%, #/runs/%E0%A4) or an unknown page shows a notice, and the navigation still works', async () => {
    for (const [hash, nav, ready] of [
      ['jobs/%', 'Jobs & schedules', `[data-testid=jobs] tr[data-job="${fx.cronJobId}"]`],
      ['runs/%E0%A4', 'Runs', '[data-testid=runs] tbody tr'],
      ['no-such-page', 'Dead letters', '[data-testid=dead] tbody tr'],
    ]) {
      await openFresh(hash); // as from a pasted link
      await page.waitForSelector('[data-testid=not-found]', { timeout: 5_000 });
      expect(await page.textContent('[data-testid=not-found]')).toMatch(hash === 'no-such-page' ? /no page "no-such-page"/ : /malformed: ".*" is not valid %-encoding/);
      expect(await page.title()).toBe('Not found · timelane');
      if (hash === 'jobs/%') await screenshot(page, 'not-found');
      await page.click(`header nav a:text("${nav}")`);
      await page.waitForSelector(ready);
      expect(await page.$('[data-testid=not-found]')).toBeNull();
    }
  });

  it("times are UTC and say so: in a browser in America/New_York, a run's displayed due minute finds it; chart axes are UTC", async () => {
    const context = await browser.newContext({ timezoneId: 'America/New_York', viewport: { width: 1360, height: 900 } });
    // Records the text uPlot draws on its canvases (axis ticks and labels): what a person reads on the charts.
    await context.addInitScript(() => {
      const drawn: string[] = [];
      (window as unknown as { drawnText: string[] }).drawnText = drawn;
      const fillText = CanvasRenderingContext2D.prototype.fillText;
      CanvasRenderingContext2D.prototype.fillText = function (text: string, x: number, y: number, maxWidth?: number) {
        drawn.push(String(text));
        return maxWidth === undefined ? fillText.call(this, text, x, y) : fillText.call(this, text, x, y, maxWidth);
      };
    });
    try {
      const ny = await watchedPage(context);
      expect(await ny.evaluate(() => new Date(Date.UTC(2026, 0, 15, 12)).getHours())).toBe(7); // the browser is in New York (UTC-5 in January)
      const { run } = await fx.client.schedule({ queue: IDLE_QUEUE, delayMs: 3_600_000, payload: 'tz' });

      await ny.goto(`${fx.consoleUrl}#/runs?queue=${IDLE_QUEUE}`);
      const cell = `[data-testid=runs] tr[data-run="${run.id}"] td:nth-child(6)`;
      await ny.waitForSelector(cell);
      const shown = (await ny.textContent(cell)) ?? '';
      const full = (await ny.getAttribute(`${cell} span`, 'title')) ?? '';

      // From a search that shows nothing, type the displayed minute as the due range: the search finds the run.
      await ny.goto('about:blank');
      await ny.goto(`${fx.consoleUrl}#/runs?queue=${IDLE_QUEUE}&to=2000-01-01T00:00`);
      await ny.waitForSelector('[data-testid=runs]:text("No runs.")');
      const minute = full.slice(0, 16).replace(' ', 'T');
      await ny.fill('input[name=from]', minute);
      await ny.fill('input[name=to]', utcMinute(Date.parse(`${minute}Z`) + 60_000));
      await ny.click('[data-testid=run-search] button[type=submit]');
      await ny.waitForSelector(`[data-testid=runs] tr[data-run="${run.id}"]`, { timeout: 10_000 });
      expect(await ny.textContent('[data-testid=run-count]')).toMatch(/^1 run\b/);

      // What is shown is the run's due instant in UTC, and says so: the cell, its full form in the title, the column and the inputs.
      const dueUtc = new Date(run.dueAtMs).toISOString().replace('T', ' ').replace('Z', '');
      expect(full).toBe(`${dueUtc} UTC`);
      expect(dueUtc.endsWith(shown)).toBe(true);
      const headers = await ny.$$eval('[data-testid=runs] th', (ths) => ths.map((th) => th.textContent));
      expect(headers[5]).toBe('due (UTC)');
      expect(await ny.textContent('[data-testid=run-search]')).toContain('due from (UTC)');

      // The overview's time axes: ticks in UTC (24-hour), labelled UTC.
      await ny.goto(`${fx.consoleUrl}#/overview`);
      await ny.waitForSelector('[data-testid=chart-fires] canvas');
      await ny.waitForFunction(() => (window as unknown as { drawnText: string[] }).drawnText.some((t) => /\d:\d\d/.test(t)), undefined, { timeout: 10_000 });
      const drawn = await ny.evaluate(() => (window as unknown as { drawnText: string[] }).drawnText);
      expect(drawn).toContain('UTC');
      // Tick labels with an hour ("17:35", or "2026-11-25 17:34" under the first tick) show it in UTC, 24-hour.
      const now = Date.now();
      const utcHours = new Set([now, now - 11 * 60_000].map((ms) => new Date(ms).toISOString().slice(11, 13)));
      const hours = drawn.map((t) => /(?:^| )(\d\d):\d\d(?::\d\d)?$/.exec(t)?.[1]).filter((h) => h !== undefined);
      expect(hours.length).toBeGreaterThan(0);
      for (const h of hours) expect(utcHours).toContain(h);
      expect(drawn.filter((t) => /\d(am|pm)$/.test(t))).toEqual([]);
      await screenshot(ny, 'overview-new-york');
    } finally {
      await context.close();
    }
  });

  it('jobs: a payload longer than the page shows is cut with a marker', async () => {
    const { job } = await fx.client.schedule({ queue: IDLE_QUEUE, delayMs: 3_600_000, payload: 'p'.repeat(600) });
    await open(`jobs/${job.id}`);
    await page.waitForSelector('[data-testid=job-spec]');
    const shown = await page.$$eval('[data-testid=job-spec] dt', (dts) => dts.find((dt) => dt.textContent === 'payload')?.nextElementSibling?.textContent);
    expect(shown).toBe(`${'p'.repeat(500)}… (600 characters)`);
  });

  it('dead letters: a filter change clears the selection, so Replay never acts on runs no longer shown', async () => {
    const [deadId] = await makeDeadRuns(1);
    await openFresh(`dead?queue=${WORK_QUEUE}`);
    const row = `[data-testid=dead] tr[data-run="${deadId}"]`;
    await page.waitForSelector(row);
    await page.check(`${row} input[type=checkbox]`);
    expect(await page.textContent('[data-testid=replay]')).toBe('Replay 1 selected');
    expect(await page.isEnabled('[data-testid=replay]')).toBe(true);

    // Filter so the selected run is hidden: nothing is selected any more.
    const errorFilter = page.getByLabel('error contains');
    await errorFilter.fill('no dead run has this error');
    await errorFilter.press('Tab');
    await page.waitForSelector(row, { state: 'detached' });
    expect(await page.textContent('[data-testid=replay]')).toMatch(/^Replay\s+selected$/);
    expect(await page.isDisabled('[data-testid=replay]')).toBe(true);
    await page.click('[data-testid=replay]', { force: true }); // a click on the disabled button does nothing

    // Back to every dead letter: the run is shown again, not selected.
    await errorFilter.fill('');
    await errorFilter.press('Tab');
    await page.waitForSelector(row);
    expect(await page.isChecked(`${row} input[type=checkbox]`)).toBe(false);
    expect(await page.isDisabled('[data-testid=replay]')).toBe(true);
    expect(await page.$('[data-testid=replay-outcome]')).toBeNull();
    const job = (await fx.client.getRun(deadId)).jobId;
    expect((await fx.client.listRuns({ jobId: job })).runs.some((r) => r.replayOf === deadId)).toBe(false);
  });

  it(`dead letters: more than a page (${DEAD_PAGE_SIZE}) of them — "more" loads the next page until every one is shown`, async () => {
    await makeDeadRuns(DEAD_PAGE_SIZE + 5);
    const all: string[] = [];
    let pageToken = '';
    do {
      const res = await fx.client.listDeadRuns({ queue: WORK_QUEUE, pageSize: 1000, pageToken });
      all.push(...res.runs.map((r) => r.id));
      pageToken = res.nextPageToken;
    } while (pageToken);
    expect(all.length).toBeGreaterThan(DEAD_PAGE_SIZE);
    expect(all.length).toBeLessThanOrEqual(2 * DEAD_PAGE_SIZE);

    await openFresh(`dead?queue=${WORK_QUEUE}`);
    await page.waitForSelector('[data-testid=dead] tbody tr');
    const listed = (): Promise<string[]> => page.$$eval('[data-testid=dead] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-run') ?? ''));
    expect(await listed()).toEqual(all.slice(0, DEAD_PAGE_SIZE)); // newest first, one page
    await page.waitForSelector('[data-testid=dead-more]', { timeout: 5_000 }); // the page says there are more, and offers them
    expect(await page.textContent('[data-testid=dead-count]')).toBe(`${DEAD_PAGE_SIZE} dead letters shown, older ones beyond. Show ${DEAD_PAGE_SIZE} more`);
    await page.click('[data-testid=dead-more]');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid=dead] tbody tr').length === n, all.length);
    expect(await listed()).toEqual(all);
    expect(await page.textContent('[data-testid=dead-count]')).toBe(`${all.length} dead letters shown, all of them.`);
    expect(await page.$('[data-testid=dead-more]')).toBeNull();
    await screenshot(page, 'dead-letters-more');
  });
});
