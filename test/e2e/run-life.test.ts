/**
 * End to end, through the client library and the CLI against a real daemon:
 * a handler told to stop (CancelJob while it runs) sees its signal abort and
 * the run ends cancelled, never redelivered; a checkpoint heartbeated by one
 * attempt reaches the retry; dead letters are listed, shown with every
 * attempt and replayed once (client and CLI); queue limits are set and read
 * (CLI); bad input to the new RPCs is INVALID_ARGUMENT naming the field.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CancelledError,
  createWorker,
  type DeliveredRunInfo,
  NonRetryableError,
  type TimelaneClient,
  timelaneV1,
  type Worker,
} from '@timelane/client';
import type { SchedulerClient } from '../../proto/gen/timelane/v1/Scheduler.js';
import type { AdminClient } from '../../proto/gen/timelane/v1/Admin.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { closeClient, closeGrpcClient, daemonProblems, grpcError, openClient, startDaemon, stopDaemon, waitUntil, runCli, type CliResult } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';


let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let raw: SchedulerClient;
let rawAdmin: AdminClient;
const workers: Worker[] = [];

/** Per run id: every delivery the handler saw, and how its signal ended. */
const seen = new Map<string, DeliveredRunInfo[]>();
const aborted = new Map<string, unknown>();

beforeAll(async () => {
  db = await createTestDatabase(4);
  daemon = await startDaemon({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, args: ['--member-id', 'run-life', '--redis-prefix', prefix] });
  client = openClient(daemon.address);
  raw = track(new (timelaneV1().Scheduler)(daemon.address, grpc.credentials.createInsecure()), 'raw scheduler');
  rawAdmin = track(new (timelaneV1().Admin)(daemon.address, grpc.credentials.createInsecure()), 'raw admin');
  const w = createWorker({
    address: daemon.address,
    queues: ['long', 'flaky', 'doomed'],
    concurrency: 20,
    workerId: 'life-worker',
    handler: async (run, ctx) => {
      seen.set(run.runId, [...(seen.get(run.runId) ?? []), run]);
      const payload = JSON.parse(run.payload.toString()) as { kind: string };
      if (payload.kind === 'long') {
        // Works until told to stop.
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted.set(run.runId, ctx.signal.reason);
        ctx.signal.throwIfAborted();
      } else if (payload.kind === 'flaky') {
        if (run.attempt === 1) {
          ctx.heartbeat(0.5, Buffer.from('row=500'));
          await new Promise((r) => setTimeout(r, 100)); // the heartbeat is written before the Fail
          throw new Error('flaky: lost connection');
        }
      } else if (payload.kind === 'doomed') {
        throw new NonRetryableError(`doomed: card declined (${run.attempt})`);
      }
    },
  });
  workers.push(track(w, 'life worker'));
});

afterAll(async () => {
  for (const w of workers) {
    await w.close();
    untrack(w);
  }
  closeGrpcClient(raw);
  untrack(raw);
  closeGrpcClient(rawAdmin);
  untrack(rawAdmin);
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

const cli = (...args: string[]): Promise<CliResult> => runCli(daemon!.address, args);

describe('cancel while running', () => {
  it("CancelJob aborts the handler's signal with a CancelledError; the run ends cancelled and is not redelivered", async () => {
    const { job, run } = await client.schedule({ queue: 'long', payload: { kind: 'long' }, leaseMs: 2_000 });
    expect(await waitUntil(() => seen.has(run.id), 5_000)).toBe(true);
    const res = await client.cancelJob(job.id);
    expect(res.job.status).toBe('cancelled');
    // Running: its worker is asked to stop it (the client dropped this count).
    expect({ cancelled: res.runsCancelled, cancelling: res.runsCancelling }).toEqual({ cancelled: 0, cancelling: 1 });
    expect(await waitUntil(() => aborted.has(run.id), 5_000)).toBe(true);
    expect(aborted.get(run.id)).toBeInstanceOf(CancelledError);
    expect(await waitUntil(async () => (await client.getRun(run.id)).status === 'cancelled', 5_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 2_500)); // past the lease: no redelivery
    expect(seen.get(run.id)).toHaveLength(1);
    const after = await client.getRun(run.id);
    expect(after.cancelRequestedAtMs).toBeGreaterThan(0);
    expect(after.attempt).toBe(1);
  });
});

describe('checkpoints', () => {
  it('the retry of a failed attempt receives the checkpoint and progress the attempt heartbeated', async () => {
    const { run } = await client.schedule({ queue: 'flaky', payload: { kind: 'flaky' }, retry: { initialBackoffMs: 50, maxBackoffMs: 50 } });
    let retry: DeliveredRunInfo | undefined;
    expect(
      await waitUntil(() => {
        retry = [...seen.values()].flat().find((d) => d.jobId === seen.get(run.id)?.[0]?.jobId && d.attempt === 2);
        return retry !== undefined;
      }, 10_000),
    ).toBe(true);
    expect(seen.get(run.id)![0].checkpoint.length).toBe(0);
    expect(retry!.checkpoint.toString()).toBe('row=500');
    expect(retry!.progress).toBeCloseTo(0.5);
  });
});

describe('heartbeats (a worker with heartbeatEveryMs)', () => {
  /** What each handler saw, by run id: the heartbeat's error, and the attempt. */
  const beats = new Map<string, { err?: unknown; attempt: number }>();
  beforeAll(() => {
    const w = createWorker({
      address: daemon!.address,
      queues: ['beats'],
      concurrency: 5,
      heartbeatEveryMs: 50,
      handler: async (run, ctx) => {
        const kind = (JSON.parse(run.payload.toString()) as { kind: string }).kind;
        const entry: { err?: unknown; attempt: number } = { attempt: run.attempt };
        beats.set(run.runId, entry);
        if (kind === 'percent') {
          try {
            ctx.heartbeat(50); // a percentage by mistake
          } catch (err) {
            entry.err = err;
          }
          await new Promise((r) => setTimeout(r, 200)); // timed heartbeats go on, and must still extend the lease
        } else if (kind === 'resume') {
          if (run.attempt === 1) {
            ctx.heartbeat(0.3, Buffer.from('row-300'));
            await new Promise((r) => setTimeout(r, 100));
            throw new Error('resume: lost connection');
          }
          await new Promise((r) => setTimeout(r, 300)); // timed heartbeats only
        }
      },
    });
    workers.push(track(w, 'beats worker'));
  });

  // Why: ctx.heartbeat(50) was sent as is: the daemon refused it and every timed heartbeat after it (they resent
  // the stored 50), so the lease was never extended and the run was handed out again and again (a hunt: 9 deliveries).
  it('a progress outside 0..1 throws at the call, and the timed heartbeats go on', async () => {
    const { run } = await client.schedule({ queue: 'beats', payload: { kind: 'percent' }, leaseMs: 1_000 });
    expect(await waitUntil(async () => (await client.getRun(run.id)).status === 'completed', 10_000)).toBe(true);
    expect(beats.get(run.id)?.err).toBeInstanceOf(RangeError);
    expect(String(beats.get(run.id)?.err)).toMatch(/progress: must be between 0 and 1 \(got 50\)/);
  });

  // Why: the timed heartbeats of a retry sent progress 0 until its handler reported one, wiping the 0.3 it resumed from.
  it('a retry resumed from a progress keeps it through its timed heartbeats', async () => {
    const { job } = await client.schedule({ queue: 'beats', payload: { kind: 'resume' }, retry: { initialBackoffMs: 50, maxBackoffMs: 50 } });
    let retryId = '';
    expect(
      await waitUntil(async () => {
        const { runs } = await client.getJob(job.id);
        const retry = runs.find((r) => r.attempt === 2 && r.status === 'completed');
        retryId = retry?.id ?? '';
        return retry !== undefined;
      }, 10_000),
    ).toBe(true);
    expect((await client.getRun(retryId)).progress).toBeCloseTo(0.3);
  });
});

describe('dead letters', () => {
  it('listed with every attempt and the worker, replayed once (client)', async () => {
    const { run } = await client.schedule({ queue: 'doomed', payload: { kind: 'doomed' } });
    expect(await waitUntil(async () => (await client.getRun(run.id)).status === 'dead', 10_000)).toBe(true);
    const page = await client.listDeadRuns({ queue: 'doomed', errorContains: 'CARD DECLINED' });
    expect(page.runs.map((r) => r.id)).toEqual([run.id]);
    const { attempts } = await client.getRunWithAttempts(run.id);
    expect(attempts.map((a) => [a.attempt, a.status, a.workerId])).toEqual([[1, 'dead', 'life-worker']]);
    expect(attempts[0].error).toContain('card declined');
    const first = await client.replayRuns({ runIds: [run.id] });
    expect(first.replayed).toHaveLength(1);
    expect((await client.replayRuns({ runIds: [run.id] })).skippedRunIds).toEqual([run.id]);
    const replay = await client.getRun(first.replayed[0].newRunId);
    expect(replay).toMatchObject({ origin: 'replay', replayOf: run.id });
  });

  it('the CLI lists and replays by filter', async () => {
    const { run } = await client.schedule({ queue: 'doomed', payload: { kind: 'doomed' }, dedupeKey: 'cli-doomed' });
    expect(await waitUntil(async () => (await client.getRun(run.id)).status === 'dead', 10_000)).toBe(true);
    const listed = await cli('dead', '--queue', 'doomed', '--error', 'declined');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(run.id);
    expect(listed.stdout).toContain('life-worker');
    const replayed = await cli('replay', '--queue', 'doomed', '--error', 'declined', '--json');
    expect(replayed.code).toBe(0);
    const res = JSON.parse(replayed.stdout) as { replayed: { deadRunId: string }[] };
    expect(res.replayed.map((r) => r.deadRunId)).toContain(run.id);
    const bad = await cli('replay');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('give run ids, or filters');
  });
});

describe('queue limits (CLI)', () => {
  it('sets, lists and removes a limit', async () => {
    const set = await cli('limits', 'payments', '--max-in-flight', '50', '--per-second', '200');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('max in flight 50');
    const listed = await cli('limits', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([{ queue: 'payments', maxInFlight: 50, maxPerSecond: 200 }]);
    // A queue alone shows its limits (it removed them); a flag alone keeps the other limit (it was set to 0).
    const shown = await cli('limits', 'payments');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('queue payments: max in flight 50, max per second 200');
    expect((await cli('limits', 'payments', '--per-second', '300')).stdout).toContain('max in flight 50, max per second 300');
    expect(await client.listQueueLimits()).toEqual([{ queue: 'payments', maxInFlight: 50, maxPerSecond: 300 }]);
    expect((await cli('limits', 'payments', '--max-in-flight', '0', '--per-second', '0')).code).toBe(0);
    expect(await client.listQueueLimits()).toEqual([]);
  });
});

describe('bad input', () => {
  const call = <Req, Res>(fn: (req: Req, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown, req: Req) =>
    new Promise<Res>((resolve, reject) => fn(req, (err, res) => (err ? reject(err) : resolve(res as Res))));

  it.each([
    ['ListDeadRuns page_token', () => call(raw.listDeadRuns.bind(raw), { pageToken: 'nope' }), 'page_token'],
    ['ListDeadRuns until before since', () => call(raw.listDeadRuns.bind(raw), { sinceMs: 2_000, untilMs: 1_000 }), 'until_ms'],
    ['ListDeadRuns error_contains with U+0000', () => call(raw.listDeadRuns.bind(raw), { errorContains: 'a\u0000b' }), 'error_contains'],
    ['ReplayRuns neither ids nor filter', () => call(raw.replayRuns.bind(raw), {}), 'run_ids'],
    ['ReplayRuns both', () => call(raw.replayRuns.bind(raw), { runIds: ['1'], filter: {} }), 'run_ids'],
    ['ReplayRuns bad id', () => call(raw.replayRuns.bind(raw), { runIds: ['x'] }), 'run_ids[0]'],
    ['SetQueueLimits bad queue', () => call(rawAdmin.setQueueLimits.bind(rawAdmin), { limits: { queue: 'bad queue', maxInFlight: 1 } }), 'limits.queue'],
    ['SetQueueLimits no limits', () => call(rawAdmin.setQueueLimits.bind(rawAdmin), {}), 'limits'],
  ])('%s → INVALID_ARGUMENT naming the field', async (_name, send, field) => {
    const err = await grpcError(send());
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
    expect(daemonProblems(daemon!)).toEqual([]);
  });
});
