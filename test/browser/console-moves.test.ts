/**
 * The web console's shard actions in headless Chromium against a real
 * two-member cluster (Redis leases, 4 shards, the console served by member
 * a): Move sends a shard of a's to b, Drain empties b; each appears as an
 * operation that ends "done", and the shard map the API returns agrees.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { closeBrowser, HAS_CHROMIUM, launchBrowser, screenshot, SKIP_MESSAGE } from '../helpers/browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, openClient, startDaemon, stopDaemon, waitUntil } from '../helpers/e2e.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';

const SHARDS = 4;

if (!HAS_CHROMIUM) console.warn(SKIP_MESSAGE);

describe.skipIf(!HAS_CHROMIUM)('web console shard actions on a two-member cluster', () => {
  let db: TestDatabase;
  const prefix = redisPrefix();
  const daemons: DaemonProcess[] = [];
  let client: TimelaneClient;
  let browser: Browser;
  let page: Page;
  let consoleUrl = '';

  beforeAll(async () => {
    db = await createTestDatabase(SHARDS);
    const member = (id: string, extra: string[] = []): Promise<DaemonProcess> =>
      startDaemon({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, args: ['--member-id', id, '--redis-prefix', prefix, '--membership-interval-ms', '300', ...extra] });
    const [a, b, br] = await Promise.all([member('a', ['--console-address', '127.0.0.1:0']), member('b'), launchBrowser()]);
    daemons.push(a, b);
    browser = br;
    consoleUrl = String(a.logs.find((l) => l.msg === 'timelane daemon started')?.console ?? '');
    client = openClient(a.address);
    const balanced = await waitUntil(async () => {
      const shards = await client.listShards();
      return ['a', 'b'].every((m) => shards.filter((s) => s.owner === m).length === SHARDS / 2);
    }, 20_000, 100);
    if (!balanced) throw new Error('the two members did not share the shards');
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  });

  afterAll(async () => {
    await closeBrowser(browser);
    closeClient(client);
    for (const d of daemons) await stopDaemon(d);
    await deleteRedisPrefix(prefix);
    await db?.drop();
  });

  const ownerOf = async (shard: number): Promise<string> => (await client.listShards()).find((s) => s.shard === shard)?.owner ?? '';

  it('Move sends one of a’s shards to b; Drain b moves all of b’s shards to a', async () => {
    await page.goto(`${consoleUrl}#/shards`);
    await page.waitForSelector('[data-testid=members] tbody tr:nth-child(2)');
    const shard = (await client.listShards()).find((s) => s.owner === 'a')!.shard;

    await page.selectOption('select[aria-label="shard to move"]', String(shard));
    await page.selectOption('select[aria-label="member to move to"]', 'b');
    await page.click('button:text("Move")');
    await page.waitForSelector(`[data-testid=operations] tbody tr:has-text("shard ${shard} → b"):has-text("done")`, { timeout: 30_000 });
    expect(await page.textContent('[data-testid=operations]')).toMatch(/moved from a to b in \d+ ms/);
    expect(await ownerOf(shard)).toBe('b');
    // The shard map shows it once the page polls again.
    await page.waitForFunction((s) => document.querySelector(`[data-testid=shards] tbody tr:nth-child(${s + 1}) td:nth-child(2)`)?.textContent === 'b', shard);

    await page.click('[data-testid=members] tr[data-member=b] button:text("Drain")');
    await page.waitForSelector('[data-testid=operations] tbody tr:has-text("drain"):has-text("member b"):has-text("done")', { timeout: 30_000 });
    expect(await page.textContent('[data-testid=operations] tbody tr:first-child')).toMatch(/moves?, all landed/);
    expect((await client.listShards()).every((s) => s.owner === 'a')).toBe(true);
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=shards] tbody tr td:nth-child(2)')].every((td) => td.textContent === 'a'));
    await screenshot(page, 'shards-moved');
  });
});
