/**
 * Fault: every Postgres connection the daemon has open goes silent at once
 * (a NAT or firewall forgot them: no reset, nothing answers), while new
 * connections work. Leases live in Redis, so the daemon keeps its shards and
 * no one else takes them: before the claim's statements were bounded, its
 * claims waited on those connections for as long as TCP takes to give up
 * (about 15 minutes on Linux; behind this proxy, for ever) and nothing fired.
 * Now a statement unanswered for
 * --database-statement-timeout-ms + 1 s drops its connection and the runs are
 * claimed again on a fresh one. Counts: every run fired, none lost, none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { startProxiedDaemon, type ProxiedDaemon } from '../helpers/proxied-daemon.js';

const SHARDS = 4;
const RUNS = 40;
const TIMEOUT_MS = 1_000;
const STOP_TIMEOUT_MS = 3_000;

let t: ProxiedDaemon | undefined;

// Leases in Redis, long: the shards stay this daemon's through the silence, so only it can fire them.
beforeAll(async () => {
  t = await startProxiedDaemon({ shards: SHARDS, queue: 'silent', args: ['--database-statement-timeout-ms', String(TIMEOUT_MS), '--stop-timeout-ms', String(STOP_TIMEOUT_MS)] });
});

afterAll(async () => {
  await t?.stop();
});

describe('fault: the daemon’s Postgres connections go silent', () => {
  it('runs due after it fire on fresh connections, once each, within a few statement timeouts', async () => {
    const { client, worker, proxy, direct, daemon } = t!;
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    // A first run through the whole path: the engine's pools hold open, live connections.
    const warm = await client.schedule({ queue: 'silent', delayMs: 100 });
    expect(await waitUntil(() => worker.recorder.has(warm.run.id), 10_000)).toBe(true);

    const due = Date.now() + 3_000;
    const scheduled = await client.scheduleBatch(Array.from({ length: RUNS }, (_, i) => ({ queue: 'silent', at: due + i * 10 })));
    const ids = scheduled.map((s) => s.run.id);
    // The runs are in the daemon's window (loaded when scheduled); then every open connection goes silent.
    await sleep(Math.max(0, due - 1_000 - Date.now()));
    expect(proxy.silenceOpen()).toBeGreaterThan(0);
    expect(Date.now(), 'the silence must come before the runs are due').toBeLessThan(due - 100);

    const w = worker;
    const allIn = await waitUntil(() => ids.every((id) => w.recorder.has(id)), 20_000, 50);
    expect(allIn, `received ${ids.filter((id) => w.recorder.has(id)).length} of ${RUNS}`).toBe(true);
    const lateness = ids.map((id) => w.recorder.byRun.get(id)![0].receivedAt - (due + ids.indexOf(id) * 10));
    console.log(`[silent-postgres] ${RUNS} runs fired after the silence; lateness ms max ${Math.max(...lateness)}, min ${Math.min(...lateness)}`);
    // A claim on a silent connection gives up after timeout + 1 s; the claim pool's third silent
    // connection may cost as much again (measured: at most 4.2 s). Without the bound: never.
    expect(Math.max(...lateness)).toBeLessThan(10 * TIMEOUT_MS);
    expect(w.recorder.duplicates()).toEqual([]);
    // None lost, none left behind: each is fired (its Complete may still be on its way) or completed.
    const { rows } = await direct.query<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM timelane.runs WHERE id = ANY($1::int8[]) GROUP BY status`,
      [ids.map(Number)],
    );
    expect(rows.reduce((n, r) => n + (['fired', 'completed'].includes(r.status) ? r.n : 0), 0)).toBe(RUNS);
    expect(daemon.logs.some((l) => /claim failed/.test(String(l.msg)))).toBe(true);
  }, 60_000);

  // Closing a pool waits for each connection's goodbye; on a silent one that is for ever, and so was the
  // graceful stop (a supervisor's SIGKILL ended it). --stop-timeout-ms bounds it.
  it('a SIGTERM while its connections are silent ends the daemon within --stop-timeout-ms', async () => {
    const { proxy, daemon } = t!;
    expect(proxy.silenceOpen()).toBeGreaterThan(0);
    const sent = Date.now();
    const code = await daemon.stop(30_000); // SIGKILL only after 30 s
    const tookMs = Date.now() - sent;
    console.log(`[silent-postgres] SIGTERM → exit ${tookMs} ms, code ${code}`);
    expect(code, 'exited by itself (code 1), not killed').toBe(1);
    expect(daemon.logs.some((l) => /graceful stop did not finish in time/.test(String(l.msg)))).toBe(true);
    expect(tookMs).toBeGreaterThanOrEqual(STOP_TIMEOUT_MS - 100);
    expect(tookMs).toBeLessThan(STOP_TIMEOUT_MS + 5_000);
  }, 60_000);
});
