/**
 * End to end: the daemon's operational surface — grpc.health.v1 Health/Check,
 * server reflection (v1alpha and v1, as grpcurl uses them), the Admin API's
 * shard map and member list, and the Prometheus /metrics endpoint.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import path from 'node:path';
import { service as healthServiceDefinition } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelaneClient } from '../../clients/index.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';
import {
  closeClient,
  collectRuns,
  freePort,
  openClient,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 8;
const MEMBER = 'surface-a';

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let metricsPort = 0;
const grpcClients: grpc.Client[] = [];

function trackedGrpc<T extends grpc.Client>(c: T): T {
  grpcClients.push(track(c, 'grpc client'));
  return c;
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  metricsPort = await freePort();
  daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', MEMBER, '--redis-prefix', prefix, '--metrics-address', `127.0.0.1:${metricsPort}`],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  for (const c of grpcClients) {
    c.close();
    untrack(c);
  }
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

// ----------------------------------------------------------------- health ---

type Unary<Req, Res> = (req: Req, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => void;

describe('grpc.health.v1.Health', () => {
  it('Check answers SERVING for the server and each timelane service, NOT_FOUND for an unknown one', async () => {
    const Health = grpc.makeClientConstructor(healthServiceDefinition, 'grpc.health.v1.Health');
    const health = trackedGrpc(new Health(daemon!.address, grpc.credentials.createInsecure()));
    const check = (service: string) =>
      new Promise<{ err: grpc.ServiceError | null; status?: string }>((resolve) =>
        (health as unknown as { Check: Unary<{ service: string }, { status: string }> }).Check(
          { service },
          { deadline: Date.now() + 5_000 },
          (err, res) => resolve({ err, status: res?.status }),
        ),
      );
    for (const service of ['', 'timelane.v1.Scheduler', 'timelane.v1.Worker', 'timelane.v1.Admin']) {
      const { err, status } = await check(service);
      expect(err, service).toBeNull();
      expect(status, service).toBe('SERVING');
    }
    const unknown = await check('no.such.Service');
    expect(unknown.err?.code).toBe(grpc.status.NOT_FOUND);
  });
});

// ------------------------------------------------------------- reflection ---

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

function reflectionClient(version: 'v1alpha' | 'v1'): grpc.Client {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('@grpc/reflection/package.json'));
  const def = protoLoader.loadSync(path.join(root, 'build', 'proto', 'grpc', 'reflection', version, 'reflection.proto'), {
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { reflection: Record<string, { ServerReflection: grpc.ServiceClientConstructor }> };
  };
  return trackedGrpc(new pkg.grpc.reflection[version].ServerReflection(daemon!.address, grpc.credentials.createInsecure()));
}

/** Sends one request on a ServerReflectionInfo stream and returns the answer. */
function reflect(c: grpc.Client, req: object): Promise<ReflectionResponse> {
  const call = (c as unknown as { ServerReflectionInfo: () => grpc.ClientDuplexStream<object, ReflectionResponse> }).ServerReflectionInfo();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no reflection answer in 5 s')), 5_000);
    call.on('data', (res: ReflectionResponse) => {
      clearTimeout(timer);
      resolve(res);
      call.end();
    });
    call.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    call.write(req);
  });
}

describe('server reflection', () => {
  it.each(['v1alpha', 'v1'] as const)('%s lists timelane.v1.Scheduler, Worker and Admin and serves their descriptors', async (version) => {
    const c = reflectionClient(version);
    const list = await reflect(c, { listServices: '' });
    const names = list.listServicesResponse?.service.map((s) => s.name) ?? [];
    expect(names).toEqual(expect.arrayContaining(['timelane.v1.Scheduler', 'timelane.v1.Worker', 'timelane.v1.Admin']));
    const file = await reflect(c, { fileContainingSymbol: 'timelane.v1.Scheduler' });
    expect(file.errorResponse).toBeFalsy();
    const protos = file.fileDescriptorResponse?.fileDescriptorProto ?? [];
    expect(protos.length).toBeGreaterThan(0);
    expect(Buffer.concat(protos).toString('latin1')).toContain('ScheduleRequest');
  });
});

// ------------------------------------------------------------------ admin ---

describe('Admin', () => {
  let worker: RecordingWorker | undefined;
  afterAll(async () => {
    await worker?.close();
  });

  it('ListShards: every shard owned here with a fence >= 1; runs_in_window counts the window; ListMembers returns the daemon', async () => {
    const shards = await client.listShards();
    expect(shards.map((s) => s.shard)).toEqual(Array.from({ length: SHARDS }, (_, i) => i));
    for (const s of shards) {
      expect(s.owner).toBe(MEMBER);
      expect(s.ownedHere).toBe(true);
      expect(s.fence).toBeGreaterThanOrEqual(1);
      expect(s.acquiredAtMs).toBeGreaterThan(0);
      expect(s.runsInWindow).toBe(0);
      expect(s.nextDueAtMs).toBe(0);
    }

    // 40 runs inside the window (20 s ahead) and 5 far beyond it (1 h).
    const near = await client.scheduleBatch(Array.from({ length: 40 }, (_, i) => ({ queue: 'surface-window', delayMs: 20_000 + i })));
    await client.scheduleBatch(Array.from({ length: 5 }, () => ({ queue: 'surface-window', delayMs: 3_600_000 })));
    const counted = await waitUntil(async () => (await client.listShards()).reduce((n, s) => n + s.runsInWindow, 0) === 40, 10_000, 100);
    const after = await client.listShards();
    expect(counted, JSON.stringify(after.map((s) => s.runsInWindow))).toBe(true);
    const nearByShard = new Map<number, number>();
    for (const r of near) nearByShard.set(r.run.shard, (nearByShard.get(r.run.shard) ?? 0) + 1);
    for (const s of after) {
      expect(s.runsInWindow, `shard ${s.shard}`).toBe(nearByShard.get(s.shard) ?? 0);
      const earliest = near.filter((r) => r.run.shard === s.shard).map((r) => r.run.dueAtMs);
      if (earliest.length) expect(s.nextDueAtMs).toBe(Math.min(...earliest));
    }

    const members = await client.listMembers();
    const me = members.find((m) => m.id === MEMBER);
    expect(me, JSON.stringify(members)).toBeDefined();
    expect(me!.grpcAddress).toBe(daemon!.address);
    expect(me!.ownedShards).toBe(SHARDS);
    expect(me!.startedAtMs).toBeGreaterThan(0);
    expect(me!.lastSeenMs).toBeGreaterThanOrEqual(me!.startedAtMs);
  });
});

// ---------------------------------------------------------------- metrics ---

function metricValue(body: string, name: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /metrics', () => {
  let worker: RecordingWorker | undefined;
  afterAll(async () => {
    await worker?.close();
  });

  it('exports fire lag, fired runs, runs in window, owned shards and clock skew after runs fired', async () => {
    worker = collectRuns({ address: daemon!.address, queues: ['surface-metrics'] });
    const scheduled = await client.scheduleBatch(Array.from({ length: 25 }, (_, i) => ({ queue: 'surface-metrics', delayMs: 200 + i * 10 })));
    expect(await worker.recorder.waitForAll(scheduled.map((s) => s.run.id), 15_000)).toBe(true);

    const url = `http://127.0.0.1:${metricsPort}/metrics`;
    let body = '';
    // Gauges are refreshed about once a second.
    const ok = await waitUntil(async () => {
      const res = await fetch(url);
      if (res.status !== 200) return false;
      body = await res.text();
      return (metricValue(body, 'timelane_owned_shards') ?? 0) === SHARDS && (metricValue(body, 'timelane_runs_in_window') ?? 0) >= 40;
    }, 10_000, 250);
    expect(ok, body.split('\n').filter((l) => l.startsWith('timelane_')).join('\n')).toBe(true);

    for (const name of ['timelane_fire_lag_ms_bucket', 'timelane_runs_fired_total', 'timelane_runs_in_window', 'timelane_owned_shards', 'timelane_clock_skew_ms']) {
      expect(body, name).toContain(name);
    }
    expect(metricValue(body, 'timelane_runs_fired_total')).toBeGreaterThanOrEqual(25);
    expect(metricValue(body, 'timelane_fire_lag_ms_count')).toBeGreaterThanOrEqual(25);
    const inf = body.split('\n').find((l) => l.startsWith('timelane_fire_lag_ms_bucket{le="+Inf"}'));
    expect(inf && Number(inf.split(' ').pop())).toBeGreaterThanOrEqual(25);
    const skew = metricValue(body, 'timelane_clock_skew_ms');
    expect(Number.isFinite(skew)).toBe(true);
    expect(Math.abs(skew!)).toBeLessThan(1_000); // same machine

    const notFound = await fetch(`http://127.0.0.1:${metricsPort}/nope`);
    expect(notFound.status).toBe(404);
    await notFound.text();
  });
});
