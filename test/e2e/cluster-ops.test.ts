/**
 * Operator moves refused or withdrawn, on a real daemon over Redis and
 * Postgres (bugs a hunt found; each failed before its fix):
 *
 * - a clustered daemon still starting (no membership round yet) answers the
 *   Admin API UNAVAILABLE: it listed itself alone, assigned itself every
 *   shard, and refused moves as "single node";
 * - DrainMember of the last member that can own shards is refused: it was
 *   accepted, reported completed, and nothing fired any more;
 * - a MoveShard that times out is withdrawn: its override stayed, and the
 *   shard moved later, after the caller was told the move failed.
 */
import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timelaneV1, type TimelaneClient } from '@timelane/client';
import type { AdminClient } from '../../proto/gen/timelane/v1/Admin.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { MembershipStore } from '../../daemon/cluster/membership.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { closeClient, freePort, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';

const SHARDS = 4;
const CLI = fileURLToPath(new URL('../../dist/clients/cli/cli.js', import.meta.url));
const { UNAVAILABLE, FAILED_PRECONDITION } = grpc.status;

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let redis: Redis;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  if (client) closeClient(client);
  await stopDaemon(daemon);
  redis?.disconnect();
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

const grpcError = <T>(p: Promise<T>): Promise<grpc.ServiceError> =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as grpc.ServiceError,
  );

describe('a clustered daemon still starting', () => {
  it('answers the Admin API UNAVAILABLE until it has joined its cluster, not as a single node', async () => {
    // Its Redis does not answer: the daemon serves gRPC, then waits (2 s) for Redis before its first membership round.
    const deadPort = await freePort();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [CLI, 'daemon', '--database-url', db.url, '--redis-url', `redis://127.0.0.1:${deadPort}`, '--redis-prefix', redisPrefix(), '--member-id', 'starting', '--grpc-address', `127.0.0.1:${port}`, '--metrics-address', '', '--database-pool-size', '4'],
      { env: { ...process.env, TIMELANE_INSECURE: '1' }, stdio: 'ignore' },
    );
    const admin = new (timelaneV1().Admin)(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as AdminClient;
    try {
      // The first answer that is not "nothing listens yet".
      let first: { err: grpc.ServiceError | null; members?: unknown[] } | undefined;
      const answered = await waitUntil(async () => {
        const r = await new Promise<{ err: grpc.ServiceError | null; members?: unknown[] }>((resolve) =>
          admin.listMembers({}, { deadline: Date.now() + 1_000 }, (err, res) => resolve({ err, members: res?.members })),
        );
        if (r.err && r.err.code === UNAVAILABLE && !/has not joined/.test(r.err.details)) return false; // not listening yet
        first = r;
        return true;
      }, 20_000);
      expect(answered).toBe(true);
      expect(first?.err?.code, `first answer: ${JSON.stringify(first?.members ?? first?.err?.details)}`).toBe(UNAVAILABLE);
      expect(first?.err?.details).toMatch(/has not joined its cluster yet/);
    } finally {
      admin.close();
      child.kill('SIGKILL');
    }
  }, 30_000);
});

describe('operator moves on a running cluster', () => {
  beforeAll(async () => {
    daemon = await startDaemon({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, args: ['--member-id', 'solo', '--redis-prefix', prefix] });
    client = openClient(daemon.address);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  });

  it('DrainMember of the only member is refused, and nothing is drained', async () => {
    const err = await grpcError(client.drainMember('solo', { timeoutMs: 1_000 }));
    expect(err.code).toBe(FAILED_PRECONDITION);
    expect(err.details).toMatch(/draining "solo" would leave 4 shards with no member to own them/);
    expect(await redis.smembers(`${prefix}drained`)).toEqual([]);
    expect((await client.listShards()).map((s) => s.assignedTo)).toEqual(Array(SHARDS).fill('solo'));
  });

  it('a MoveShard that times out is withdrawn: the shard stays where it was', async () => {
    // A member that is live (its record is there) but never takes a shard, as a frozen one not yet suspected.
    const store = new MembershipStore(redis, prefix);
    await store.heartbeat(
      { id: 'ghost', address: '127.0.0.1:1', startedAtMs: Date.now(), lastSeenMs: Date.now(), ownedShards: 0, pinned: [], adoptOrphans: false, standby: false },
      60_000,
      '',
    );
    expect(await waitUntil(async () => (await client.listMembers()).some((m) => m.id === 'ghost'), 10_000)).toBe(true);
    const shard = (await client.listShards()).find((s) => s.owner === 'solo' && s.assignedTo === 'solo')?.shard;
    expect(shard).toBeDefined();
    const err = await grpcError(client.moveShard(shard!, 'ghost', { timeoutMs: 500 }));
    expect(err.code).toBe(FAILED_PRECONDITION);
    expect(err.details).toMatch(/did not reach "ghost" within 500 ms; the move is withdrawn/);
    expect(await redis.hget(`${prefix}overrides`, String(shard))).toBeNull();
    // Withdrawn, the balanced assignment (solo keeps its share) holds: the shard is solo's again, or still.
    expect(await waitUntil(async () => (await client.listShards()).find((s) => s.shard === shard)?.owner === 'solo', 10_000)).toBe(true);
    await redis.del(`${prefix}member:ghost`);
    await redis.srem(`${prefix}members`, 'ghost');
  });
});
