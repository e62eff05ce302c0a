/**
 * Fault: a worker answers while the daemon's Postgres is down. The daemon
 * acks each answer UNAVAILABLE (it could not record it); the worker library
 * sends those answers again once Postgres is back, so the runs end completed
 * (or failed) after one delivery — not handed out a second time when their
 * lease ends. Without the resend every run here is delivered twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { AckInfo, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { PrivatePostgres } from '../helpers/private-postgres.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 4;
const RUNS = 20;
const queue = 'answer-outage';

describe('fault: answers written while Postgres is down', () => {
  let pg: PrivatePostgres | undefined;
  let daemon: DaemonProcess | undefined;
  let client: TimelaneClient | undefined;
  let worker: RecordingWorker | undefined;
  const acks: AckInfo[] = [];
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));

  beforeAll(async () => {
    pg = await PrivatePostgres.create();
    await pg.start();
    const url = await pg.createDatabase('tl_answer_outage');
    daemon = await startDaemon({
      databaseUrl: url,
      args: ['--member-id', 'answer-outage', '--migrate-on-start', '--shard-count', String(SHARDS), '--lease-ttl-ms', '2000', '--reap-interval-ms', '250'],
    });
    client = openClient(daemon.address, 5_000);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    // Half the runs complete, half fail (one attempt each: a recorded Fail makes the run dead).
    worker = collectRuns({
      address: daemon.address,
      queues: [queue],
      onAck: (ack) => acks.push(ack),
      handler: async (run) => {
        await released;
        if (Number(run.runId) % 2 === 0) throw new Error('boom');
      },
    });
  });

  afterAll(async () => {
    release();
    await worker?.close();
    closeClient(client);
    await stopDaemon(daemon);
    await pg?.destroy();
  });

  it('the answers acked UNAVAILABLE are sent again once Postgres is back: each run delivered once and recorded', async () => {
    const c = client!;
    const rec = worker!.recorder;
    // A lease far longer than the outage: a run handed out twice here was redelivered because its answer was lost.
    const scheduled = await c.scheduleBatch(Array.from({ length: RUNS }, () => ({ queue, delayMs: 300, leaseMs: 12_000, delivery: 'at_least_once' as const, retry: { maxAttempts: 1 } })));
    const ids = scheduled.map((s) => s.run.id);
    expect(await rec.waitForAll(ids, 15_000)).toBe(true);

    await pg!.stop({ mode: 'immediate' });
    release();
    // Every answer comes back refused while Postgres is away.
    expect(await waitUntil(() => new Set(acks.filter((a) => a.code === grpc.status.UNAVAILABLE).map((a) => a.runId)).size === RUNS, 10_000)).toBe(true);
    await pg!.start();

    const settled = await waitUntil(async () => {
      const runs = await Promise.all(ids.map((id) => c.getRun(id).catch(() => undefined)));
      return runs.every((r) => r !== undefined && (r.status === 'completed' || r.status === 'dead'));
    }, 20_000, 200);
    const runs = await Promise.all(ids.map((id) => c.getRun(id)));
    expect(settled, runs.map((r) => `${r.id}:${r.status}`).join(' ')).toBe(true);
    expect(runs.filter((r) => Number(r.id) % 2 === 1).every((r) => r.status === 'completed')).toBe(true);
    expect(runs.filter((r) => Number(r.id) % 2 === 0).every((r) => r.status === 'dead')).toBe(true);
    // Delivered once each: the answers were recorded before any lease ended.
    expect(rec.duplicates()).toEqual([]);
    expect(runs.map((r) => r.deliveries)).toEqual(ids.map(() => 1));
    expect(daemon!.running).toBe(true);
  });
});
