/**
 * End to end: every RPC refuses bad input with INVALID_ARGUMENT naming the
 * field (raw gRPC requests, so the client library's own checks are not in
 * the way), unknown ids get NOT_FOUND, the Work stream refuses a bad start
 * and acks bad answers with code 3, and after all of it the daemon still
 * serves and fires. Also: dedupe keys make Schedule idempotent, and
 * ScheduleBatch refuses a bad batch_id and replies with references only.
 */
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TimelaneClient, timelaneV1 } from '@timelane/client';
import { newWorkerClient } from '../../clients/typescript/src/work-stream.js';
import type { SchedulerClient } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { ScheduleRequest } from '../../proto/gen/timelane/v1/ScheduleRequest.js';
import type { WorkResponse__Output } from '../../proto/gen/timelane/v1/WorkResponse.js';
import type { WorkRequest } from '../../clients/typescript/proto/gen/timelane/v1/WorkRequest.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track, untrack } from '../helpers/tracked.js';
import {
  closeClient,
  closeGrpcClient,
  closeStream,
  collectRuns,
  daemonProblems,
  openClient,
  openStream,
  sleep,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  type RecordingWorker,
} from '../helpers/e2e.js';

const SHARDS = 4;
const MAX_PAYLOAD = 2048;
const YEAR_MS = 365 * 24 * 3600 * 1000;
const { INVALID_ARGUMENT, NOT_FOUND } = grpc.status;

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let raw: SchedulerClient;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', 'bad-input', '--redis-prefix', prefix, '--max-payload-bytes', String(MAX_PAYLOAD)],
  });
  client = openClient(daemon.address);
  raw = track(new (timelaneV1().Scheduler)(daemon.address, grpc.credentials.createInsecure()), 'raw scheduler client');
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
});

afterAll(async () => {
  closeGrpcClient(raw);
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

type Method = 'schedule' | 'scheduleBatch' | 'getJob' | 'getRun' | 'listRuns' | 'listQueues' | 'cancelJob' | 'rescheduleJob';

/** A raw unary call; resolves with the response or the ServiceError. */
function call(method: Method, req: object): Promise<{ err: grpc.ServiceError | null; res: unknown }> {
  const fn = (raw as unknown as Record<Method, (r: object, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: unknown) => void) => void>)[method];
  return new Promise((resolve) => fn.call(raw, req, { deadline: Date.now() + 10_000 }, (err, res) => resolve({ err, res })));
}

/** Expects `code` with `field` named at the start of the details ("field: rule"). */
async function expectRefused(method: Method, req: object, field: string, code = INVALID_ARGUMENT): Promise<void> {
  const { err } = await call(method, req);
  expect(err, `${method} ${JSON.stringify(req).slice(0, 200)} should fail`).not.toBeNull();
  expect({ code: err!.code, details: err!.details }).toMatchObject({ code });
  if (code === INVALID_ARGUMENT) expect(err!.details.startsWith(`${field}: `), `details "${err!.details}" should name ${field}`).toBe(true);
  else expect(err!.details).toContain(field);
}

const good = (over: Partial<ScheduleRequest> = {}): ScheduleRequest => ({ queue: 'bad-input-ok', delayMs: 60_000, ...over });

describe('Schedule', () => {
  const cases: [string, ScheduleRequest, string][] = [
    ['missing queue', good({ queue: '' }), 'queue'],
    ['queue with bad chars', good({ queue: 'has space' }), 'queue'],
    ['queue with a slash', good({ queue: 'a/b' }), 'queue'],
    ['queue too long', good({ queue: 'q'.repeat(129) }), 'queue'],
    ['bad namespace', good({ namespace: 'no:colons' }), 'namespace'],
    ['payload over --max-payload-bytes', good({ payload: Buffer.alloc(MAX_PAYLOAD + 1, 1) }), 'payload'],
    ['no when', { queue: 'bad-input-ok' }, 'when'],
    ['now = false', { queue: 'bad-input-ok', now: false }, 'now'],
    ['at_ms 11 years ahead', { queue: 'bad-input-ok', atMs: String(Date.now() + 11 * YEAR_MS) }, 'at_ms'],
    ['at_ms 2 years ago', { queue: 'bad-input-ok', atMs: String(Date.now() - 2 * YEAR_MS) }, 'at_ms'],
    ['delay_ms "negative" (2^64-1 as uint64)', { queue: 'bad-input-ok', delayMs: '18446744073709551615' }, 'delay_ms'],
    ['delay_ms 11 years', { queue: 'bad-input-ok', delayMs: String(11 * YEAR_MS) }, 'delay_ms'],
    ['priority 1001', good({ priority: 1001 }), 'priority'],
    ['priority -1001', good({ priority: -1001 }), 'priority'],
    ['dedupe_key too long', good({ dedupeKey: 'k'.repeat(257) }), 'dedupe_key'],
    // Was INTERNAL (Postgres 22021: "invalid byte sequence for encoding UTF8: 0x00").
    ['dedupe_key with U+0000', good({ dedupeKey: 'a\u0000b' }), 'dedupe_key'],
    ['unknown delivery enum value 7', good({ delivery: 7 as unknown as ScheduleRequest['delivery'] }), 'delivery'],
    ['retry.max_attempts 1000', good({ retry: { maxAttempts: 1000 } }), 'retry.max_attempts'],
    ['retry.initial_backoff_ms over a day', good({ retry: { initialBackoffMs: 86_400_001 } }), 'retry.initial_backoff_ms'],
    ['retry.max_backoff_ms below initial', good({ retry: { initialBackoffMs: 5_000, maxBackoffMs: 1_000 } }), 'retry.max_backoff_ms'],
    ['lease_ms 10', good({ leaseMs: 10 }), 'lease_ms'],
    ['lease_ms over an hour', good({ leaseMs: 3_600_001 }), 'lease_ms'],
    // Was accepted: the daemon's own queue of recurring workflow starts.
    ['the reserved queue timelane:workflow-start', good({ queue: 'timelane:workflow-start' }), 'queue'],
    // The queue a closing worker's answers-only stream subscribes to: it must never have a run.
    ['the reserved queue timelane:none', good({ queue: 'timelane:none' }), 'queue'],
  ];
  it.each(cases)('%s → INVALID_ARGUMENT naming the field', async (_name, req, field) => {
    await expectRefused('schedule', req, field);
  });

  it('nothing was scheduled by the refused requests', async () => {
    const page = await client.listRuns({ queue: 'bad-input-ok' });
    expect(page.runs).toEqual([]);
  });

  it('the limits themselves are accepted (payload of exactly the max, queue of 128, priority ±1000)', async () => {
    const { err, res } = await call('schedule', good({ queue: 'q'.repeat(128), payload: Buffer.alloc(MAX_PAYLOAD, 1), priority: -1000, leaseMs: 1000 }));
    expect(err).toBeNull();
    const r = res as { job: { id: string } };
    await client.cancelJob(r.job.id);
  });
});

describe('ScheduleBatch', () => {
  it('empty → requests', async () => {
    await expectRefused('scheduleBatch', { requests: [] }, 'requests');
  });

  it('1001 items → requests', async () => {
    await expectRefused('scheduleBatch', { requests: Array.from({ length: 1001 }, () => good({ queue: 'batch-1001' })) }, 'requests');
    expect((await client.listRuns({ queue: 'batch-1001' })).runs).toEqual([]);
  });

  it('one bad item names requests[3].queue, and nothing of the batch is scheduled', async () => {
    const requests = Array.from({ length: 6 }, (_, i) => good({ queue: i === 3 ? 'bad queue' : 'batch-one-bad' }));
    await expectRefused('scheduleBatch', { requests }, 'requests[3].queue');
    const badWhen = Array.from({ length: 6 }, (_, i) => (i === 4 ? { queue: 'batch-one-bad' } : good({ queue: 'batch-one-bad' })));
    await expectRefused('scheduleBatch', { requests: badWhen }, 'requests[4].when');
    expect((await client.listRuns({ queue: 'batch-one-bad' })).runs).toEqual([]);
  });

  it('batch_id: bad characters or length → batch_id; another namespace than requests[0] → requests[k].namespace', async () => {
    const requests = Array.from({ length: 3 }, () => good({ queue: 'batch-keyed-bad' }));
    await expectRefused('scheduleBatch', { requests, batchId: 'has space' }, 'batch_id');
    await expectRefused('scheduleBatch', { requests, batchId: 'k'.repeat(129) }, 'batch_id');
    const mixed = requests.map((r, i) => ({ ...r, namespace: i === 2 ? 'elsewhere' : '' }));
    await expectRefused('scheduleBatch', { requests: mixed, batchId: 'b-mixed' }, 'requests[2].namespace');
    expect((await client.listRuns({ queue: 'batch-keyed-bad' })).runs).toEqual([]);
    // Without a key, one batch may span namespaces.
    const { err } = await call('scheduleBatch', { requests: mixed });
    expect(err).toBeNull();
  });

  it('the reply holds references only (no payload, no job settings) and says whether it was replayed', async () => {
    const requests = [good({ queue: 'batch-reply', payload: Buffer.alloc(MAX_PAYLOAD, 7), dedupeKey: 'reply-1' })];
    const first = await call('scheduleBatch', { requests, batchId: 'reply-batch' });
    expect(first.err).toBeNull();
    const again = await call('scheduleBatch', { requests, batchId: 'reply-batch' });
    expect(again.res).toEqual({ ...(first.res as object), replayed: true });
    const res = first.res as { scheduled: Record<string, unknown>[]; replayed: boolean };
    expect(res.replayed).toBe(false);
    expect(Object.keys(res.scheduled[0]).sort()).toEqual(['deduplicated', 'delivery', 'dueAtMs', 'jobId', 'runId', 'shard', 'status']);
    expect(res.scheduled[0]).toMatchObject({ status: 'RUN_SCHEDULED', delivery: 'AT_LEAST_ONCE', deduplicated: false });
  });
});

describe('reads and job commands', () => {
  it('GetJob: empty, not a uuid → job_id; unknown uuid → NOT_FOUND', async () => {
    await expectRefused('getJob', { jobId: '' }, 'job_id');
    await expectRefused('getJob', { jobId: 'not-a-uuid' }, 'job_id');
    await expectRefused('getJob', { jobId: "'; DROP TABLE jobs; --" }, 'job_id');
    await expectRefused('getJob', { jobId: randomUUID() }, 'not found', NOT_FOUND);
  });

  it('GetRun: not numeric → run_id; unknown id → NOT_FOUND', async () => {
    await expectRefused('getRun', { runId: '' }, 'run_id');
    await expectRefused('getRun', { runId: 'abc' }, 'run_id');
    await expectRefused('getRun', { runId: '-5' }, 'run_id');
    await expectRefused('getRun', { runId: '1.5' }, 'run_id');
    await expectRefused('getRun', { runId: '99999999999999999999' }, 'run_id');
    // Was NOT_FOUND for "run 10000000000000000": rounded to another id.
    await expectRefused('getRun', { runId: '9999999999999999' }, 'run_id');
    await expectRefused('getRun', { runId: '987654321' }, 'not found', NOT_FOUND);
  });

  it('ListRuns: page_size 5000, bad page_token, unknown status, bad filters', async () => {
    await expectRefused('listRuns', { pageSize: 5000 }, 'page_size');
    await expectRefused('listRuns', { pageToken: 'xyz' }, 'page_token');
    await expectRefused('listRuns', { pageToken: '-1' }, 'page_token');
    await expectRefused('listRuns', { status: 99 }, 'status');
    await expectRefused('listRuns', { jobId: 'nope' }, 'job_id');
    await expectRefused('listRuns', { queue: 'bad queue' }, 'queue');
    await expectRefused('listRuns', { dueFromMs: '-5' }, 'due_from_ms');
    await expectRefused('listRuns', { dueToMs: '253402300800000' }, 'due_to_ms');
    await expectRefused('listRuns', { dueFromMs: '2000', dueToMs: '1000' }, 'due_to_ms');
    const ok = await call('listRuns', { pageSize: 1000 });
    expect(ok.err).toBeNull();
  });

  it('ListQueues: page_size 5000, a page_token that is no queue name (a NUL byte, a space, too long)', async () => {
    await expectRefused('listQueues', { pageSize: 5000 }, 'page_size');
    await expectRefused('listQueues', { pageToken: 'a\u0000b' }, 'page_token');
    await expectRefused('listQueues', { pageToken: 'a b' }, 'page_token');
    await expectRefused('listQueues', { pageToken: 'q'.repeat(300) }, 'page_token');
    expect((await call('listQueues', { pageToken: 'bad-input-ok' })).err).toBeNull();
  });

  it('ListRuns by due time: exactly the runs due in the range, paged with no gap', async () => {
    const base = Date.now() + 3_600_000;
    const made = await client.scheduleBatch(Array.from({ length: 9 }, (_, k) => ({ queue: 'due-range', at: base + k * 1_000 })));
    const want = made.slice(2, 7).map((s) => s.run.id); // due base+2s … base+6s, both ends included
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await client.listRuns({ queue: 'due-range', dueFrom: base + 2_000, dueTo: base + 6_000, pageSize: 2, pageToken });
      expect(page.runs.length).toBeLessThanOrEqual(2);
      seen.push(...page.runs.map((r) => r.id));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    expect(seen).toEqual(want);
    await expect(client.listRuns({ dueFrom: Number.NaN })).rejects.toThrow(/^dueFrom: /);
  });

  it('CancelJob: bad ids → job_id; unknown uuid → NOT_FOUND', async () => {
    await expectRefused('cancelJob', { jobId: '' }, 'job_id');
    await expectRefused('cancelJob', { jobId: '1234' }, 'job_id');
    await expectRefused('cancelJob', { jobId: randomUUID() }, 'not found', NOT_FOUND);
  });

  it('RescheduleJob: bad ids → job_id; bad when; unknown uuid → NOT_FOUND', async () => {
    await expectRefused('rescheduleJob', { jobId: '', delayMs: 1000 }, 'job_id');
    await expectRefused('rescheduleJob', { jobId: 'x', delayMs: 1000 }, 'job_id');
    await expectRefused('rescheduleJob', { jobId: randomUUID() }, 'when');
    await expectRefused('rescheduleJob', { jobId: randomUUID(), now: false }, 'now');
    await expectRefused('rescheduleJob', { jobId: randomUUID(), atMs: String(Date.now() + 11 * YEAR_MS) }, 'at_ms');
    await expectRefused('rescheduleJob', { jobId: randomUUID(), delayMs: 1000 }, 'not found', NOT_FOUND);
  });
});

describe('Work stream', () => {
  it('a first message that is not subscribe ends the stream with INVALID_ARGUMENT', async () => {
    const wc = track(newWorkerClient(daemon!.address), 'raw worker client');
    try {
      const callStream = wc.work();
      const runs: WorkResponse__Output[] = [];
      callStream.on('data', (m: WorkResponse__Output) => runs.push(m));
      const end = new Promise<grpc.StatusObject>((resolve) => callStream.on('status', resolve));
      callStream.on('error', () => undefined);
      callStream.write({ complete: { ref: { runId: '1', fence: '1', delivery: 1 } } });
      const status = await end;
      expect(status.code).toBe(INVALID_ARGUMENT);
      expect(status.details).toMatch(/^subscribe: /);
      expect(runs).toEqual([]);
    } finally {
      wc.close();
      untrack(wc);
    }
  });

  it('subscribe with no queues, a bad queue, or max_in_flight 0 → INVALID_ARGUMENT naming the field', async () => {
    const cases: [Parameters<typeof openStream>[1], string][] = [
      [{ queues: [] }, 'subscribe.queues'],
      [{ queues: Array.from({ length: 65 }, (_, i) => `q${i}`) }, 'subscribe.queues'],
      [{ queues: ['ok', 'bad queue'] }, 'subscribe.queues[1]'],
      [{ queues: ['ok'], maxInFlight: 0 }, 'subscribe.max_in_flight'],
      [{ queues: ['ok'], maxInFlight: 10_001 }, 'subscribe.max_in_flight'],
      [{ queues: ['ok'], workerId: 'w'.repeat(129) }, 'subscribe.worker_id'],
      [{ queues: ['ok'], stageAheadMs: 1_001 }, 'subscribe.stage_ahead_ms'],
      // Was accepted: such a worker took the daemon's recurring workflow starts, and completed them unstarted.
      [{ queues: ['ok', 'timelane:workflow-start'] }, 'subscribe.queues[1]'],
    ];
    for (const [sub, field] of cases) {
      const s = openStream(daemon!.address, sub);
      const end = await s.finished;
      untrack(s);
      expect(end.code, JSON.stringify(sub).slice(0, 100)).toBe(INVALID_ARGUMENT);
      expect(end.details.startsWith(`${field}: `), `details "${end.details}" should name ${field}`).toBe(true);
    }
  });

  it('a malformed Unstarted (not acked) ends the stream with INVALID_ARGUMENT naming the field; a well-formed one for runs that do not exist changes nothing', async () => {
    const cases: [WorkRequest, string][] = [
      [{ unstarted: { refs: [] } }, 'unstarted.refs'],
      [{ unstarted: { refs: [{ runId: '5', fence: '1', delivery: 1 }] } }, 'unstarted.refs[0].shard'],
      [{ unstarted: { refs: [{ runId: '5', fence: '0', delivery: 1, shard: 0 }] } }, 'unstarted.refs[0].fence'],
    ];
    for (const [req, field] of cases) {
      const s = openStream(daemon!.address, { queues: ['bad-unstarted'] });
      await s.subscribed();
      expect(s.send(req)).toBe(true);
      const end = await s.finished;
      untrack(s);
      expect(end.code).toBe(INVALID_ARGUMENT);
      expect(end.details.startsWith(`${field}: `), `details "${end.details}" should name ${field}`).toBe(true);
    }
    const s = openStream(daemon!.address, { queues: ['bad-unstarted'] });
    try {
      await s.subscribed();
      expect(s.send({ unstarted: { refs: [{ runId: '987654321', fence: '1', delivery: 1, shard: 0 }] } })).toBe(true);
      // Still open: a Complete after it is acked as usual.
      expect(s.complete({ runId: '987654321', fence: '1', delivery: 1 })).toBe(true);
      expect((await s.nextAck(5_000)).code).toBe(NOT_FOUND);
      expect(s.writable).toBe(true);
    } finally {
      await closeStream(s, true);
    }
  });

  it('bad answers on a subscribed stream are acked with code 3 (or 5) and the stream stays open', async () => {
    const s = openStream(daemon!.address, { queues: ['bad-answers'] });
    try {
      const answers: [() => boolean, number, string][] = [
        [() => s.complete({ runId: 'abc', fence: '1', delivery: 1 }), INVALID_ARGUMENT, 'complete.ref.run_id'],
        [() => s.complete({ runId: '', fence: '1', delivery: 1 }), INVALID_ARGUMENT, 'complete.ref.run_id'],
        [() => s.complete({ runId: '1', fence: '0', delivery: 1 }), INVALID_ARGUMENT, 'complete.ref.fence'],
        [() => s.complete({ runId: '1', fence: '1', delivery: 0 }), INVALID_ARGUMENT, 'complete.ref.delivery'],
        // Past Postgres int: was a range error failing the whole shared Complete batch.
        [() => s.complete({ runId: '1', fence: '1', delivery: 2 ** 31 }), INVALID_ARGUMENT, 'complete.ref.delivery'],
        [() => s.complete({ runId: '1', fence: '1', delivery: 1, shard: 70_000 }), INVALID_ARGUMENT, 'complete.ref.shard'],
        [() => s.send({ complete: {} }), INVALID_ARGUMENT, 'complete.ref'],
        [() => s.fail({ runId: 'x', fence: '1', delivery: 1 }, true), INVALID_ARGUMENT, 'fail.ref.run_id'],
        [() => s.heartbeat({ runId: 'x', fence: '1', delivery: 1 }), INVALID_ARGUMENT, 'heartbeat.ref.run_id'],
        [() => s.heartbeat({ runId: '1', fence: '1', delivery: 1 }, 2), INVALID_ARGUMENT, 'heartbeat.progress'],
        [() => s.send({ subscribe: { queues: ['again'], maxInFlight: 1 } }), INVALID_ARGUMENT, 'msg'],
        [() => s.complete({ runId: '987654321', fence: '1', delivery: 1 }), NOT_FOUND, 'run 987654321'],
      ];
      for (const [send, code, field] of answers) {
        expect(send()).toBe(true);
        const ack = await s.nextAck(5_000);
        expect({ code: ack.code, message: ack.message }).toMatchObject({ code });
        if (code === INVALID_ARGUMENT) expect(ack.message.startsWith(`${field}: `), `ack "${ack.message}" should name ${field}`).toBe(true);
        else expect(ack.message).toContain(field);
      }
      expect(s.writable).toBe(true);
    } finally {
      await closeStream(s, true);
    }
  });
});

describe('U+0000 in an answer and unknown members (regressions)', () => {
  it('a Fail whose message holds U+0000 is recorded (ack 0, run dead, message kept with U+FFFD), not refused with code 13', async () => {
    const s = openStream(daemon!.address, { queues: ['nul-fail'] });
    try {
      await s.subscribed();
      const { run } = await client.schedule({ queue: 'nul-fail', delayMs: 50, retry: { maxAttempts: 3 } });
      const got = await s.nextRun(10_000);
      expect(got.runId).toBe(run.id);
      expect(s.fail(got.ref, false, 'bad\u0000byte')).toBe(true);
      const ack = await s.nextAck(5_000);
      expect({ code: ack.code, message: ack.message }).toEqual({ code: 0, message: '' });
      const stored = await client.getRun(run.id);
      expect(stored.status).toBe('dead');
      expect(stored.error).toBe('bad\uFFFDbyte');
    } finally {
      await closeStream(s, true);
    }
  });

  it('subscribe with U+0000 in worker_id → INVALID_ARGUMENT naming it', async () => {
    const s = openStream(daemon!.address, { queues: ['nul-sub'], workerId: 'w\u0000' });
    try {
      const end = await s.finished;
      expect(end.code).toBe(INVALID_ARGUMENT);
      expect(end.details.startsWith('subscribe.worker_id: ')).toBe(true);
    } finally {
      await closeStream(s, true);
    }
  });

  it('DrainMember undo for a member that is neither live nor drained → NOT_FOUND (was OK)', async () => {
    const err = await client.drainMember('no-such-member', { undo: true, timeoutMs: 1_000 }).then(
      () => null,
      (e: unknown) => e as grpc.ServiceError,
    );
    expect(err?.code).toBe(NOT_FOUND);
    expect(err?.details).toContain('no-such-member');
    // Undo for the live member itself stays a harmless no-op.
    const ok = await client.drainMember('bad-input', { undo: true, timeoutMs: 1_000 });
    expect(ok.moves).toEqual([]);
  });
});

describe('after all that', () => {
  let worker: RecordingWorker | undefined;
  afterAll(async () => {
    await worker?.close();
  });

  it('the daemon is alive and a run scheduled 300 ms ahead fires to a worker', async () => {
    expect(daemon!.running).toBe(true);
    worker = collectRuns({ address: daemon!.address, queues: ['still-alive'] });
    const { run } = await client.schedule({ queue: 'still-alive', delayMs: 300 });
    expect(await worker.recorder.waitForAll([run.id], 10_000)).toBe(true);
    const [{ receivedAt }] = worker.recorder.byRun.get(run.id)!;
    expect(receivedAt).toBeGreaterThanOrEqual(run.dueAtMs);
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});

describe('dedupe', () => {
  let worker: RecordingWorker | undefined;
  afterAll(async () => {
    await worker?.close();
  });

  it('Schedule twice with one dedupe_key: the second is deduplicated (same job), one run fires', async () => {
    worker = collectRuns({ address: daemon!.address, queues: ['dedupe'] });
    const a = await client.schedule({ queue: 'dedupe', delayMs: 400, dedupeKey: 'order-42' });
    const b = await client.schedule({ queue: 'dedupe', delayMs: 100, dedupeKey: 'order-42', payload: 'other' });
    expect(a.deduplicated).toBe(false);
    expect(b.deduplicated).toBe(true);
    expect(b.job.id).toBe(a.job.id);
    expect(b.run.id).toBe(a.run.id);
    expect(b.run.dueAtMs).toBe(a.run.dueAtMs); // the first job's, unchanged

    // Same key in another namespace is another job.
    const c = await client.schedule({ queue: 'dedupe', delayMs: 400, dedupeKey: 'order-42', namespace: 'other-ns' });
    expect(c.deduplicated).toBe(false);
    expect(c.job.id).not.toBe(a.job.id);

    // Concurrent Schedules with one key: exactly one creates the job.
    const racing = await Promise.all(Array.from({ length: 10 }, () => client.schedule({ queue: 'dedupe', delayMs: 400, dedupeKey: 'race-1' })));
    expect(racing.filter((r) => !r.deduplicated)).toHaveLength(1);
    expect(new Set(racing.map((r) => r.job.id)).size).toBe(1);

    // Within one batch: the second item is deduplicated against the first.
    const batch = await client.scheduleBatch([
      { queue: 'dedupe', delayMs: 400, dedupeKey: 'batch-1' },
      { queue: 'dedupe', delayMs: 400, dedupeKey: 'batch-1' },
    ]);
    expect(batch.map((r) => r.deduplicated)).toEqual([false, true]);
    expect(batch[1].job.id).toBe(batch[0].job.id);

    const expected = [a.run.id, c.run.id, racing[0].run.id, batch[0].run.id];
    expect(await worker.recorder.waitForAll(expected, 10_000)).toBe(true);
    await sleep(1_000);
    expect(worker.recorder.distinct).toBe(4);
    expect(worker.recorder.receipts).toHaveLength(4);
    expect((await client.listRuns({ queue: 'dedupe' })).runs).toHaveLength(4);
  });
});
