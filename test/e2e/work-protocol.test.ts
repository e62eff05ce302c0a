/**
 * End to end: the Work stream's message shapes, from a raw gRPC client with
 * grpc-js's default limits (4 MiB per received message), as a worker written
 * without timelane's client would see them.
 *
 * - `batch_runs`: runs arrive as RunBatch, and a batch never grows past the
 *   daemon's ~1 MiB cap: 24 runs of 256 KiB due at the same instant (6 MiB)
 *   all arrive, none over the receive limit; a CompleteBatch of them is
 *   answered by one AckBatch, every ack OK; single Completes written
 *   together are acked together, in one AckBatch.
 * - without it (a client from before RunBatch): one DeliveredRun per message,
 *   single Completes, single Acks.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TimelaneClient, timelaneV1 } from '@timelane/client';
import type { WorkerClient } from '../../proto/gen/timelane/v1/Worker.js';
import type { WorkRequest } from '../../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkResponse__Output } from '../../proto/gen/timelane/v1/WorkResponse.js';
import type { DeliveredRun__Output } from '../../proto/gen/timelane/v1/DeliveredRun.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { track } from '../helpers/tracked.js';
import { closeClient, closeGrpcClient, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';

const SHARDS = 4;
const PAYLOAD = 256 * 1024;
const RUNS = 24;

let db: TestDatabase;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let raw: WorkerClient;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'work-protocol', '--max-payload-bytes', String(PAYLOAD)] });
  client = openClient(daemon.address);
  // grpc-js defaults: at most 4 MiB per received message.
  raw = track(new (timelaneV1().Worker)(daemon.address, grpc.credentials.createInsecure()), 'raw worker client');
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  closeGrpcClient(raw);
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
});

interface Seen {
  messages: WorkResponse__Output[];
  runs: DeliveredRun__Output[];
  error: grpc.ServiceError | null;
}

function openRaw(queue: string, batchRuns: boolean) {
  const call = raw.work();
  const seen: Seen = { messages: [], runs: [], error: null };
  call.on('data', (m: WorkResponse__Output) => {
    seen.messages.push(m);
    if (m.runs) seen.runs.push(...m.runs.runs);
    if (m.run) seen.runs.push(m.run);
  });
  call.on('error', (e: grpc.ServiceError) => (seen.error = e));
  const send = (req: WorkRequest): void => void call.write(req);
  send({ subscribe: { queues: [queue], maxInFlight: 100, workerId: 'raw', batchRuns } });
  const close = async (): Promise<void> => {
    call.end();
    await new Promise<void>((resolve) => {
      if (seen.error) return resolve();
      call.on('status', () => resolve());
      call.on('error', () => resolve());
    });
  };
  return { seen, send, close };
}

async function scheduleBig(queue: string): Promise<string[]> {
  const at = Date.now() + 1_000;
  const batch = await client.scheduleBatch(Array.from({ length: RUNS }, (_, i) => ({ queue, at, payload: Buffer.alloc(PAYLOAD, i) })));
  return batch.map((b) => b.run.id);
}

const refOf = (r: DeliveredRun__Output) => ({ runId: r.runId, fence: r.fence, delivery: r.delivery, shard: r.shard });

describe('Work stream message shapes', () => {
  it('batch_runs: 6 MiB of runs due at once arrive in RunBatches under the 4 MiB default limit; one CompleteBatch, one AckBatch', async () => {
    const s = openRaw('proto-batched', true);
    try {
      await waitUntil(() => s.seen.messages.some((m) => m.subscribed), 5_000);
      const ids = await scheduleBig('proto-batched');
      expect(await waitUntil(() => s.seen.runs.length >= RUNS || s.seen.error !== null, 10_000)).toBe(true);
      expect(s.seen.error).toBeNull();
      expect(s.seen.runs.map((r) => r.runId).sort()).toEqual([...ids].sort());
      const batches = s.seen.messages.filter((m) => m.runs);
      expect(batches.length).toBeGreaterThan(1); // 6 MiB cannot be one batch
      for (const b of batches) expect(b.runs!.runs.reduce((n, r) => n + r.payload.length, 0)).toBeLessThanOrEqual(1024 * 1024 + PAYLOAD);
      expect(s.seen.messages.some((m) => m.run)).toBe(false);

      s.send({ completes: { refs: s.seen.runs.map(refOf) } });
      expect(await waitUntil(() => s.seen.messages.some((m) => m.acks), 5_000)).toBe(true);
      const acks = s.seen.messages.filter((m) => m.acks).flatMap((m) => m.acks!.acks);
      expect(acks.map((a) => a.runId).sort()).toEqual([...ids].sort());
      expect(acks.every((a) => a.code === 0)).toBe(true);
      expect((await client.getRun(ids[0])).status).toBe('completed');
    } finally {
      await s.close();
    }
  });

  it('batch_runs: single Completes written together are acked in one AckBatch', async () => {
    const s = openRaw('proto-acks', true);
    try {
      await waitUntil(() => s.seen.messages.some((m) => m.subscribed), 5_000);
      const at = Date.now() + 500;
      const ids = (await client.scheduleBatch(Array.from({ length: 10 }, () => ({ queue: 'proto-acks', at })))).map((b) => b.run.id);
      expect(await waitUntil(() => s.seen.runs.length >= 10, 10_000)).toBe(true);
      const sent = s.seen.runs.map(refOf);
      for (const ref of sent) s.send({ complete: { ref } }); // ten messages, written in one go
      const ackMessages = (): WorkResponse__Output[] => s.seen.messages.filter((m) => m.ack || m.acks);
      const acked = (): string[] => ackMessages().flatMap((m) => (m.ack ? [m.ack] : m.acks!.acks)).map((a) => a.runId);
      expect(await waitUntil(() => acked().length >= 10, 5_000)).toBe(true);
      // (Two Complete batches may be in flight at once: order across them is not promised.)
      expect([...acked()].sort()).toEqual(sent.map((r) => r.runId).sort());
      expect([...acked()].sort()).toEqual([...ids].sort());
      // The Complete batcher writes them in one statement (5 ms gather); before, one Ack message each.
      expect(ackMessages().length).toBeLessThanOrEqual(2);
    } finally {
      await s.close();
    }
  });

  it('without batch_runs (a client from before RunBatch): one DeliveredRun per message, single Complete and Ack', async () => {
    const s = openRaw('proto-single', false);
    try {
      await waitUntil(() => s.seen.messages.some((m) => m.subscribed), 5_000);
      const ids = (await scheduleBig('proto-single')).slice(0, RUNS);
      expect(await waitUntil(() => s.seen.runs.length >= RUNS || s.seen.error !== null, 10_000)).toBe(true);
      expect(s.seen.error).toBeNull();
      expect(s.seen.messages.some((m) => m.runs)).toBe(false);
      expect(s.seen.messages.filter((m) => m.run)).toHaveLength(RUNS);
      const first = s.seen.runs[0];
      s.send({ complete: { ref: refOf(first) } });
      expect(await waitUntil(() => s.seen.messages.some((m) => m.ack), 5_000)).toBe(true);
      expect(s.seen.messages.find((m) => m.ack)!.ack).toMatchObject({ runId: first.runId, code: 0 });
      expect(ids).toContain(first.runId);
    } finally {
      await s.close();
    }
  });
});
