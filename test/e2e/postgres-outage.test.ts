/**
 * End to end: Postgres goes away under a running daemon (a private server,
 * stopped with `pg_ctl stop -m immediate`, or kill -9 of the postmaster and
 * its backends) and comes back on the same port and data. While it is down
 * the API answers UNAVAILABLE and the daemon stays up; once it is back every
 * run scheduled before the outage fires (lost = 0) — the ones that came due
 * during it late, never early — and Schedule works again.
 */
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AckInfo, ScheduleInput, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import {
  closeClient,
  collectRuns,
  grpcError,
  openClient,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 8;
const LEASE_MS = 2_000;
const { UNAVAILABLE } = grpc.status;

let server: PrivatePostgres | undefined;

beforeAll(async () => {
  server = await PrivatePostgres.create();
  await server.start();
});

afterAll(async () => {
  await server?.destroy();
});

describe.each([
  { name: 'postgres leases, pg_ctl stop -m immediate', redis: false, crash: 'immediate' as const },
  { name: 'redis leases, kill -9 of the postmaster', redis: true, crash: 'kill9' as const },
])('Postgres outage ($name)', ({ redis, crash }) => {
  const prefix = redisPrefix();
  const queue = `outage-${redis ? 'redis' : 'pg'}`;
  let daemon: DaemonProcess | undefined;
  let client: TimelaneClient | undefined;
  let worker: RecordingWorker | undefined;
  const acks: { ack: AckInfo; at: number }[] = [];

  beforeAll(async () => {
    const url = await server!.createDatabase(`tl_outage_${redis ? 'redis' : 'pg'}`);
    daemon = await startDaemon({
      databaseUrl: url,
      redisUrl: redis ? TEST_REDIS_URL : undefined,
      args: [
        '--member-id', `outage-${redis ? 'r' : 'p'}`,
        '--migrate-on-start',
        '--shard-count', String(SHARDS),
        '--lease-ttl-ms', '2000',
        '--reap-interval-ms', '250',
        ...(redis ? ['--redis-prefix', prefix] : []),
      ],
    });
    client = openClient(daemon.address, 5_000);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    worker = collectRuns({ address: daemon.address, queues: [queue], onAck: (ack) => acks.push({ ack, at: Date.now() }) });
  });

  afterAll(async () => {
    await worker?.close();
    closeClient(client);
    await stopDaemon(daemon);
    if (redis) await deleteRedisPrefix(prefix);
  });

  it('answers UNAVAILABLE while Postgres is down, stays up, and fires every run scheduled before the outage once it is back', async () => {
    const c = client!;
    const rec = worker!.recorder;
    const now = Date.now();
    const outageAt = now + 1_500;
    const outageMs = 4_000;
    // Due before, during and after the outage.
    const inputs: ScheduleInput[] = [
      ...Array.from({ length: 20 }, (_, i) => ({ queue, at: now + 500 + i * 40, leaseMs: LEASE_MS })),
      ...Array.from({ length: 100 }, (_, i) => ({ queue, at: outageAt + 300 + i * 30, leaseMs: LEASE_MS })),
      ...Array.from({ length: 20 }, (_, i) => ({ queue, at: outageAt + outageMs + 2_000 + i * 50, leaseMs: LEASE_MS })),
    ];
    const scheduled = await c.scheduleBatch(inputs);
    const dueOf = new Map(scheduled.map((s) => [s.run.id, s.run.dueAtMs]));

    await sleep(Math.max(0, outageAt - Date.now()));
    if (crash === 'kill9') await server!.kill9();
    else await server!.stop({ mode: 'immediate' });
    expect(server!.running).toBe(false);
    const downAt = Date.now();

    // While down: the API answers UNAVAILABLE (14), quickly, and the daemon stays up.
    const t0 = Date.now();
    const errs = [
      await grpcError(c.schedule({ queue, delayMs: 1_000 })),
      await grpcError(c.scheduleBatch([{ queue, delayMs: 1_000 }])),
      await grpcError(c.getJob(scheduled[0].job.id)),
      await grpcError(c.getRun(scheduled[0].run.id)),
      await grpcError(c.listRuns({ queue })),
      await grpcError(c.cancelJob(randomUUID())),
    ];
    expect(errs.map((e) => e.code), errs.map((e) => e.details).join(' | ')).toEqual(errs.map(() => UNAVAILABLE));
    expect(Date.now() - t0).toBeLessThan(4_000 * errs.length);
    await sleep(Math.max(0, downAt + outageMs - Date.now()));
    expect(daemon!.running).toBe(true);
    expect(await grpcError(c.getJob(scheduled[0].job.id)).then((e) => e.code)).toBe(UNAVAILABLE);

    const restartAt = Date.now(); // Postgres may accept connections a little before start() returns
    await server!.start();
    const upAt = Date.now();

    // Every run scheduled before the outage fires: none lost, none early.
    const all = await rec.waitForAll(dueOf.keys(), 30_000);
    const missing = [...dueOf.keys()].filter((id) => !rec.has(id));
    expect(all, `missing ${missing.length}: ${missing.slice(0, 10).join(',')}; daemon: ${daemon!.tail(3)}`).toBe(true);
    for (const { run, receivedAt } of rec.receipts) expect(receivedAt).toBeGreaterThanOrEqual(dueOf.get(run.runId)!);
    // Runs that came due while Postgres was down were fired after it came back.
    const dueDuring = scheduled.filter((s) => s.run.dueAtMs > downAt && s.run.dueAtMs < restartAt);
    expect(dueDuring.length).toBeGreaterThan(30);
    for (const s of dueDuring) {
      const first = rec.byRun.get(s.run.id)![0];
      expect(first.receivedAt).toBeGreaterThanOrEqual(restartAt);
    }

    // The API works again, and a new run fires.
    expect(await waitUntil(async () => (await c.getJob(scheduled[0].job.id).then(() => true, () => false)), 10_000)).toBe(true);
    const fresh = await c.schedule({ queue, delayMs: 300 });
    expect(fresh.deduplicated).toBe(false);
    expect(await rec.waitForAll([fresh.run.id], 15_000)).toBe(true);

    // Eventually everything is completed: answers lost in the outage were redelivered and answered.
    const done = await waitUntil(async () => {
      const page = await c.listRuns({ queue, pageSize: 1000 });
      return page.runs.length === dueOf.size + 1 && page.runs.every((r) => r.status === 'completed');
    }, 20_000, 250);
    const page = await c.listRuns({ queue, pageSize: 1000 });
    expect(done, JSON.stringify(page.runs.filter((r) => r.status !== 'completed').slice(0, 3))).toBe(true);
    // A run whose answer was acknowledged OK is never handed out again; duplicates keep one idempotency key.
    const redeliveredAfterOk: string[] = [];
    for (const { ack, at } of acks) {
      if (ack.code !== 0) continue;
      const later = (rec.byRun.get(ack.runId) ?? []).filter((r) => r.receivedAt > at);
      if (later.length > 0) redeliveredAfterOk.push(`${ack.runId} (delivery ${later[0].run.delivery})`);
    }
    expect(redeliveredAfterOk).toEqual([]);
    for (const dup of rec.duplicates()) expect(new Set(rec.byRun.get(dup)!.map((g) => g.run.idempotencyKey)).size).toBe(1);
    console.log(
      `[postgres-outage ${redis ? 'redis' : 'pg'}] ${dueOf.size} runs, ${dueDuring.length} due during the outage, ` +
        `${rec.duplicates().length} redelivered, non-OK acks ${acks.filter((a) => a.ack.code !== 0).length}; back ${upAt - downAt} ms after the stop`,
    );
    expect(daemon!.running).toBe(true);
  });
});
