/**
 * Fault: an operator stops a daemon whose Postgres connections went silent,
 * with no stop limit (`--stop-timeout-ms 0`). The graceful stop then waits
 * on those connections' goodbyes for ever; a second SIGTERM must end the
 * process at once, with code 1 (as safe as a kill -9: everything it did is in
 * Postgres, and its leases run out).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from '../helpers/e2e.js';
import { startProxiedDaemon, type ProxiedDaemon } from '../helpers/proxied-daemon.js';

let t: ProxiedDaemon | undefined;

beforeAll(async () => {
  t = await startProxiedDaemon({ shards: 4, queue: 'second-signal', args: ['--database-statement-timeout-ms', '1000', '--stop-timeout-ms', '0'] });
});

afterAll(async () => {
  await t?.stop();
});

it('a second SIGTERM ends a graceful stop that waits on silent connections, at once, with code 1', async () => {
  const { proxy, daemon } = t!;
  expect(proxy.silenceOpen()).toBeGreaterThan(0);
  daemon.signal('SIGTERM');
  await daemon.waitForLog((l) => l.msg === 'stopping', 5_000);
  // Without a limit the stop is still waiting well after the statement timeout's drops.
  await sleep(3_000);
  expect(daemon.running, 'the first SIGTERM alone does not end it').toBe(true);
  const exited = new Promise<number | null>((resolve) => daemon.child.once('exit', (c) => resolve(c)));
  const sent = Date.now();
  daemon.signal('SIGTERM');
  const code = await Promise.race([exited, sleep(10_000).then(() => 'still running' as const)]);
  const tookMs = Date.now() - sent;
  console.log(`[second-signal] second SIGTERM → exit ${tookMs} ms, code ${code}`);
  expect(code, 'exited by itself (code 1), not killed').toBe(1);
  expect(tookMs).toBeLessThan(2_000);
  expect(daemon.logs.some((l) => /second signal/.test(String(l.msg)))).toBe(true);
}, 60_000);
