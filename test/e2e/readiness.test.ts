/**
 * End to end: readiness and liveness. A daemon reports SERVING (the empty
 * service name, which a readinessProbe checks) only once it holds every shard
 * assigned to it; `timelane.liveness` is SERVING as soon as it answers at all.
 * Before: SERVING came ~20 ms before the last lease, and a Kubernetes probe
 * sent traffic to a daemon that could not fire yet.
 */
import * as grpc from '@grpc/grpc-js';
import { service as healthServiceDefinition } from 'grpc-health-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { track, untrack } from '../helpers/tracked.js';
import { closeClient, openClient, startDaemon, stopDaemon } from '../helpers/e2e.js';

const SHARDS = 32;

let db: TestDatabase | undefined;
let daemon: DaemonProcess | undefined;
afterAll(async () => {
  await stopDaemon(daemon);
  await db?.drop();
});

describe('readiness', () => {
  it('SERVING only once every assigned shard is held: every acquisition is logged before the daemon says it started', async () => {
    db = await createTestDatabase(SHARDS);
    daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'readiness'] });
    const startedAt = daemon.logs.findIndex((l) => l.msg === 'timelane daemon started');
    expect(startedAt).toBeGreaterThan(0);
    const acquiredBefore = new Set(daemon.logs.slice(0, startedAt).filter((l) => l.msg === 'shard acquired').map((l) => (l as { shard?: number }).shard));
    expect(acquiredBefore.size).toBe(SHARDS);

    const Health = grpc.makeClientConstructor(healthServiceDefinition, 'grpc.health.v1.Health');
    const health = track(new Health(daemon.address, grpc.credentials.createInsecure()), 'health client');
    try {
      const check = (service: string) =>
        new Promise<string | undefined>((resolve) =>
          (health as unknown as { Check: (r: { service: string }, o: grpc.CallOptions, cb: (e: unknown, r?: { status: string }) => void) => void }).Check(
            { service },
            { deadline: Date.now() + 5_000 },
            (_e, r) => resolve(r?.status),
          ),
        );
      expect(await check('')).toBe('SERVING');
      expect(await check('timelane.liveness')).toBe('SERVING');
      const client = openClient(daemon.address);
      try {
        expect((await client.listShards()).filter((s) => s.ownedHere)).toHaveLength(SHARDS);
      } finally {
        closeClient(client);
      }
    } finally {
      health.close();
      untrack(health);
    }
  });
});
