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
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import type { TimelaneClient } from '@timelane/client';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, sleep, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';

const SHARDS = 1;
const PREFIX = redisPrefix();

let db: TestDatabase;
let proxy: TcpProxy;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient | undefined;
let worker: RecordingWorker | undefined;
let direct: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  const url = new URL(db.url);
  proxy = await TcpProxy.start(`${url.hostname}:${url.port || 5432}`);
  url.port = String(proxy.port);
  // Leases in Redis (Postgres leases would renew in a transaction whose answer is swallowed too,
  // and hold the shard row the claim needs); long, so the swallowed seconds do not cost the shard.
  daemon = await startDaemon({ databaseUrl: url.toString(), redisUrl: TEST_REDIS_URL, args: ['--lease-ttl-ms', '10000', '--redis-prefix', PREFIX] });
  client = openClient(daemon.address);
  worker = collectRuns({ address: daemon.address, queues: ['doubt'] });
  direct = new pg.Client({ connectionString: db.url });
  await direct.connect();
});

afterAll(async () => {
  await direct?.end();
  await worker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await proxy?.close();
  await deleteRedisPrefix(PREFIX);
  await db?.drop();
});

describe('fault: a claim committed whose answer was lost', () => {
  it('its runs are delivered once Postgres answers again, once each', async () => {
    expect(await waitForOwnedShards(client!, SHARDS)).toBe(true);
    // A first run through the whole path opens the claim pool's connection: the claim
    // must go out on a live connection (a new one's handshake would be swallowed too).
    const warm = await client!.schedule({ queue: 'doubt', delayMs: 200 });
    expect(await waitUntil(() => worker!.recorder.byRun.has(warm.run.id), 10_000)).toBe(true);
    const due = Date.now() + 2_000;
    const once = await client!.schedule({ queue: 'doubt', at: due, delivery: 'at_most_once' });
    const least = await client!.schedule({ queue: 'doubt', at: due, delivery: 'at_least_once' });
    const ids = [Number(once.run.id), Number(least.run.id)];
    const statuses = async () => (await direct.query<{ status: string }>('SELECT status FROM timelane.runs WHERE id = ANY($1::int8[])', [ids])).rows.map((r) => r.status);

    // Position the fault just before the claim (the scenario's clock, not a wait for an outcome).
    await sleep(Math.max(0, due - 300 - Date.now()));
    proxy.swallowAnswers();
    // The claim commits; its answer is dropped.
    expect(await waitUntil(async () => (await statuses()).every((s) => s === 'fired'), 5_000, 20)).toBe(true);
    expect(worker!.recorder.byRun.size).toBe(1); // the warm-up run only
    const cut = proxy.cutAll();
    expect(cut).toBeGreaterThan(0);

    const w = worker!;
    expect(await waitUntil(() => w.recorder.byRun.has(once.run.id) && w.recorder.byRun.has(least.run.id), 10_000)).toBe(true);
    expect(daemon!.logs.some((l) => String(l.msg).startsWith('an errored claim had fired runs after all'))).toBe(true);
    // Once each (the at-least-once run is completed by the worker, so nothing brings it back).
    expect(await waitUntil(async () => (await statuses()).every((s) => s === 'completed'), 10_000)).toBe(true);
    expect(w.recorder.byRun.get(once.run.id)).toHaveLength(1);
    expect(w.recorder.byRun.get(least.run.id)).toHaveLength(1);
  });
});
