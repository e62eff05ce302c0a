/**
 * The web console in a real headless Chromium against a real daemon with
 * real data (test/helpers/console-fixture.ts): each page shows what a
 * person would look for, charts are drawn with data, and the actions an
 * operator takes (pause a job, replay a dead letter, rebalance) take effect
 * through the API. Screenshots go to test/browser/screenshots/ (gitignored).
 * Waits are on selectors and conditions, never fixed sleeps.
 */
import type { Browser, Page } from 'playwright-core';
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

if (!HAS_CHROMIUM) console.warn(SKIP_MESSAGE);

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

    // Search by id through the form.
    await page.fill('input[name=id]', fx.deadRunId);
    await page.selectOption('select[name=status]', '');
    await page.fill('input[name=queue]', '');
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
});
