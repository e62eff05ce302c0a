/**
 * End to end: the daemon's operational surface — grpc.health.v1 Health/Check,
 * server reflection (v1alpha and v1, as grpcurl uses them), the Admin API's
 * shard map and member list, and the Prometheus /metrics endpoint. Also
 * ScheduleBatch through the real client with its default limits: a small
 * reply whatever the payloads, dedupe within and across batches, and the
 * batch idempotency key.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import path from 'node:path';
import { service as healthServiceDefinition } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';
import {
  closeClient,
  collectRuns,
  freePort,
  metricValue,
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
    // Liveness, for a livenessProbe: SERVING whenever the process answers.
    expect(await check('timelane.liveness')).toEqual({ err: null, status: 'SERVING' });
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
    // What the alerts in ops/prometheus compare: shards owned against the count, stores up.
    expect(metricValue(body, 'timelane_shard_count')).toBe(SHARDS);
    expect(metricValue(body, 'timelane_postgres_up')).toBe(1);
    expect(metricValue(body, 'timelane_redis_up')).toBe(1);
    // Labelled counters exist at 0 from the start: a series first seen at its final value has no increase() for an alert.
    expect(body).toMatch(/^timelane_runs_failed_total\{outcome="dead"\} 0$/m);
    expect(body).toMatch(/^timelane_shards_lost_total\{reason="stale fence"\} 0$/m);
    expect(body).toMatch(/^timelane_occurrences_total\{outcome="missed"\} 0$/m);

    const notFound = await fetch(`http://127.0.0.1:${metricsPort}/nope`);
    expect(notFound.status).toBe(404);
    await notFound.text();
    // A scraper's query string (Prometheus `params`) is ignored, not a 404.
    const withParams = await fetch(`http://127.0.0.1:${metricsPort}/metrics?module=timelane`);
    expect(withParams.status).toBe(200);
    expect(await withParams.text()).toContain('timelane_runs_fired_total');
  });
});

// ---------------------------------------------------------- ScheduleBatch ---

/** Payloads of a batch, distinct per input: byte 0..3 = k, the rest k % 251. */
const payloadOf = (k: number, size: number): Buffer => {
  const b = Buffer.alloc(size, k % 251);
  b.writeUInt32BE(k, 0);
  return b;
};

async function jobsOnQueue(queue: string): Promise<{ jobs: number; runs: number }> {
  const { rows } = await db.pool.query<{ jobs: number; runs: number }>(
    `SELECT (SELECT count(*)::int FROM jobs WHERE queue = $1) AS jobs, (SELECT count(*)::int FROM runs WHERE queue = $1) AS runs`,
    [queue],
  );
  return rows[0];
}

describe('ScheduleBatch', () => {
  it('1000 schedules of 5 KB payloads: committed, and the reply fits the default 4 MB receive limit of the client', async () => {
    // Before replies were references only, this 5.1 MB batch committed and the
    // caller still saw RESOURCE_EXHAUSTED (the reply echoed every payload).
    const c = openClient(daemon!.address); // default channel options: 4 MB receive limit
    try {
      const queue = 'batch-big-payloads';
      const at = Date.now() + 3_600_000;
      const inputs = Array.from({ length: 1000 }, (_, k) => ({ queue, at: at + k, payload: payloadOf(k, 5 * 1024) }));
      const res = await c.scheduleBatch(inputs);
      expect(res).toHaveLength(1000);
      expect(new Set(res.map((r) => r.run.id)).size).toBe(1000);
      res.forEach((r, k) => {
        expect(r.run.dueAtMs).toBe(at + k);
        expect(r.deduplicated).toBe(false);
        expect(r.run.jobId).toBe(r.job.id);
      });
      // Every payload stored byte for byte, against the job the reply named.
      const { rows } = await db.pool.query<{ id: string; payload: Buffer }>('SELECT id, payload FROM jobs WHERE queue = $1', [queue]);
      const stored = new Map(rows.map((r) => [r.id, r.payload]));
      expect(stored.size).toBe(1000);
      res.forEach((r, k) => expect(stored.get(r.job.id)?.equals(inputs[k].payload)).toBe(true));
      expect((await c.getJob(res[17].job.id)).job.payload.equals(inputs[17].payload)).toBe(true);
    } finally {
      closeClient(c);
    }
  });

  it('dedupe keys: within one batch the first request wins; across batches the committed job is returned', async () => {
    const queue = 'batch-dedupe';
    const at = Date.now() + 3_600_000;
    const first = await client.scheduleBatch([
      { queue, at, dedupeKey: 'a' },
      { queue, at: at + 1, dedupeKey: 'b' },
      { queue, at: at + 2, dedupeKey: 'a', payload: 'other' },
      { queue, at: at + 3 },
    ]);
    expect(first.map((r) => r.deduplicated)).toEqual([false, false, true, false]);
    expect(first[2].job.id).toBe(first[0].job.id);
    expect(first[2].run).toEqual(first[0].run); // the existing run, its due time
    const second = await client.scheduleBatch([
      { queue, at: at + 10, dedupeKey: 'b', delivery: 'at_most_once' },
      { queue, at: at + 11, dedupeKey: 'c' },
      { queue, at: at + 12, dedupeKey: 'a' },
    ]);
    expect(second.map((r) => r.deduplicated)).toEqual([true, false, true]);
    expect(second[0].job).toEqual(first[1].job); // the existing job's delivery mode, not the request's
    expect(second[0].run).toEqual(first[1].run);
    expect(second[2].run.id).toBe(first[0].run.id);
    expect(second[1].run).toMatchObject({ dueAtMs: at + 11, status: 'scheduled' });
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 4, runs: 4 });
  });

  it('batch_id: a resent batch is not applied again and answers with the same ids; so does a concurrent duplicate', async () => {
    const queue = 'batch-keyed';
    const at = Date.now() + 3_600_000;
    const pre = await client.schedule({ queue, at, dedupeKey: 'taken' });
    const inputs = Array.from({ length: 300 }, (_, k) => ({ queue, at: at + k, payload: payloadOf(k, 64), ...(k === 7 ? { dedupeKey: 'taken' } : {}) }));
    const first = await client.scheduleBatch(inputs, { batchId: 'order-batch-1' });
    expect(first[7]).toMatchObject({ deduplicated: true, job: { id: pre.job.id } });
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 300, runs: 300 });

    const again = await client.scheduleBatch(inputs, { batchId: 'order-batch-1' });
    expect(again).toEqual(first);
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 300, runs: 300 });

    // Two sends racing with one key: one applies, the other waits for it and replays.
    const other = inputs.map((i) => ({ ...i, queue: `${queue}-race` }));
    const [x, y] = await Promise.all([client.scheduleBatch(other, { batchId: 'order-batch-2' }), client.scheduleBatch(other, { batchId: 'order-batch-2' })]);
    expect(y).toEqual(x);
    expect(x[7].job.id).toBe(pre.job.id); // request 7's key is taken here too
    expect(await jobsOnQueue(`${queue}-race`)).toEqual({ jobs: 299, runs: 299 });

    // The same key with another number of requests is refused, and applies nothing.
    const err = await client.scheduleBatch(inputs.slice(0, 10), { batchId: 'order-batch-1' }).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    expect((err as grpc.ServiceError).details).toContain('order-batch-1');
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 300, runs: 300 });
  });

  it('all or none: one bad request (the last of 1000) refuses the batch, names it, and schedules nothing', async () => {
    const queue = 'batch-last-bad';
    const inputs = Array.from({ length: 1000 }, (_, k) => ({ queue: k === 999 ? 'bad queue' : queue, delayMs: 60_000 }));
    const err = await client.scheduleBatch(inputs, { batchId: 'last-bad' }).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((err as grpc.ServiceError).details).toMatch(/^requests\[999\]\.queue: /);
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 0, runs: 0 });
    // The key was not taken: the corrected batch applies.
    inputs[999].queue = queue;
    expect(await client.scheduleBatch(inputs, { batchId: 'last-bad' })).toHaveLength(1000);
    expect(await jobsOnQueue(queue)).toEqual({ jobs: 1000, runs: 1000 });
  });
});
