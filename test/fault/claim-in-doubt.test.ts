/**
 * Fault: Postgres commits a claim and its answer never arrives (the
 * connection dies first). The claim's outcome is unknown to the daemon; the
 * runs it fired are found and delivered once Postgres answers again, not
 * left fired and undelivered. A TCP proxy between the daemon and Postgres
 * swallows the answers from just before the runs' due time until the claim
 * has committed (seen on a direct connection), then cuts every connection.
 * Counts: both runs (one at-most-once, one at-least-once) reach the worker,
 * once each, well before the at-least-once lease (30 s) could bring it back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { startProxiedDaemon, type ProxiedDaemon } from '../helpers/proxied-daemon.js';

const SHARDS = 1;

let t: ProxiedDaemon | undefined;

// Leases in Redis: Postgres leases would renew in a transaction whose answer is swallowed too,
// and hold the shard row the claim needs; long, so the swallowed seconds do not cost the shard.
beforeAll(async () => {
  t = await startProxiedDaemon({ shards: SHARDS, queue: 'doubt' });
});

afterAll(async () => {
  await t?.stop();
});

describe('fault: a claim committed whose answer was lost', () => {
  it('its runs are delivered once Postgres answers again, once each', async () => {
    const { client, worker, proxy, direct, daemon } = t!;
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    // A first run through the whole path opens the claim pool's connection: the claim
    // must go out on a live connection (a new one's handshake would be swallowed too).
    const warm = await client.schedule({ queue: 'doubt', delayMs: 200 });
    expect(await waitUntil(() => worker.recorder.byRun.has(warm.run.id), 10_000)).toBe(true);
    const due = Date.now() + 2_000;
    const once = await client.schedule({ queue: 'doubt', at: due, delivery: 'at_most_once' });
    const least = await client.schedule({ queue: 'doubt', at: due, delivery: 'at_least_once' });
    const ids = [Number(once.run.id), Number(least.run.id)];
    const statuses = async () => (await direct.query<{ status: string }>('SELECT status FROM timelane.runs WHERE id = ANY($1::int8[])', [ids])).rows.map((r) => r.status);

    // Position the fault just before the claim (the scenario's clock, not a wait for an outcome).
    await sleep(Math.max(0, due - 300 - Date.now()));
    proxy.swallowAnswers();
    // The claim commits; its answer is dropped.
    expect(await waitUntil(async () => (await statuses()).every((s) => s === 'fired'), 5_000, 20)).toBe(true);
    expect(worker.recorder.byRun.size).toBe(1); // the warm-up run only
    const cut = proxy.cutAll();
    expect(cut).toBeGreaterThan(0);

    const w = worker;
    expect(await waitUntil(() => w.recorder.byRun.has(once.run.id) && w.recorder.byRun.has(least.run.id), 10_000)).toBe(true);
    expect(daemon.logs.some((l) => String(l.msg).startsWith('an errored claim had fired runs after all'))).toBe(true);
    // Once each (the at-least-once run is completed by the worker, so nothing brings it back).
    expect(await waitUntil(async () => (await statuses()).every((s) => s === 'completed'), 10_000)).toBe(true);
    expect(w.recorder.byRun.get(once.run.id)).toHaveLength(1);
    expect(w.recorder.byRun.get(least.run.id)).toHaveLength(1);
  });
});
