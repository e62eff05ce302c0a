/**
 * End to end: details of workflows that test/e2e/workflows.test.ts leaves
 * open, through the client library, a raw Work stream and the built CLI,
 * against a real daemon, Postgres and Redis.
 *
 * - A run started at an instant (StartWorkflow.at_ms: the client's `at`, the
 *   CLI's `workflow start --at`): its root step's run is made at the start
 *   but reaches a worker only at/after the instant (due at it, fired at or
 *   after it), and its child after that.
 * - Step outputs are at most 64 KiB (Complete.output). The daemon refuses a
 *   Complete over it with INVALID_ARGUMENT naming `complete.output`, writes
 *   nothing (the step stays running, its child pending), keeps the stream
 *   and the run: a Complete at exactly the limit then succeeds the step and
 *   its child receives those bytes. The worker library fails a step whose
 *   handler returns more (counted in bytes, not characters): not retried, a
 *   clear error, no output stored, its child never delivered.
 * - GetWorkflowRun's times and lag agree with what the worker saw: ready ≤
 *   started ≤ fired ≤ finished; a child is ready only once its parent
 *   finished; a step held back by max_in_flight is ready before it starts;
 *   fired_at is the hand-off the worker was told of; lag = fired − due, even
 *   when a run waited for worker credit.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DeliveredRunInfo,
  type TimelaneClient,
  timelaneV1,
  type WorkflowDefinitionInput,
  type WorkflowRunInfo,
  type WorkflowRunWithSteps,
  type WorkflowStepInfo,
} from '@timelane/client';
import type { WorkerClient } from '../../proto/gen/timelane/v1/Worker.js';
import type { WorkRequest } from '../../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkResponse__Output } from '../../proto/gen/timelane/v1/WorkResponse.js';
import type { DeliveredRun__Output } from '../../proto/gen/timelane/v1/DeliveredRun.js';
import type { Ack__Output } from '../../proto/gen/timelane/v1/Ack.js';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { track } from '../helpers/tracked.js';
import {
  closeClient,
  closeGrpcClient,
  collectRuns,
  daemonProblems,
  openClient,
  startDaemon,
  stopDaemon,
  waitForOwnedShards,
  waitUntil,
  type Receipt,
  type RecordingWorker,
  runCli,
  type CliResult,
  waitForWorkflowState,
} from '../helpers/e2e.js';

const SHARDS = 4;
const QUEUE = 'wfd-e2e';
/** Served by a worker with one slot: a second run waits for its credit. */
const NARROW = 'wfd-narrow';
/** Served by a raw Work stream opened in the test. */
const RAW = 'wfd-raw';
/** Complete.output: "At most 64 KiB" (proto, README). */
const LIMIT = 64 * 1024;
/** What a handler that "works" spends (a setTimeout: the step's work, not a synchronisation). */
const WORK_MS = 40;
const { INVALID_ARGUMENT } = grpc.status;

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker;
let narrow: RecordingWorker;
let raw: WorkerClient;

/** What each step's handler returns, by the step's payload tag ("<tag>/<step>"). */
type Behaviour = (run: DeliveredRunInfo) => Promise<unknown>;
const behaviours = new Map<string, Behaviour>();
/** When each run's handler finished (the worker's Date.now()), by run id. */
const handlerEnd = new Map<string, number>();

const work = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, WORK_MS));

/** A handler: the tag's behaviour (default: output "out:<step>"), its end time recorded. */
async function handle(run: DeliveredRunInfo): Promise<unknown> {
  const b = behaviours.get(run.payload.toString().split('/')[0]);
  try {
    return b ? await b(run) : `out:${run.workflow?.step ?? ''}`;
  } finally {
    handlerEnd.set(run.runId, Date.now());
  }
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, args: ['--member-id', 'workflow-details', '--redis-prefix', prefix] });
  client = openClient(daemon.address);
  raw = track(new (timelaneV1().Worker)(daemon.address, grpc.credentials.createInsecure()), 'raw worker client');
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({ address: daemon.address, queues: [QUEUE], handler: handle });
  narrow = collectRuns({ address: daemon.address, queues: [NARROW], concurrency: 1, handler: handle });
});

afterAll(async () => {
  await worker?.close();
  await narrow?.close();
  closeGrpcClient(raw);
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

/** A definition whose steps' payloads are "<tag>/<step>". */
function definition(tag: string, edges: Record<string, string[]>, extra: Partial<WorkflowDefinitionInput> = {}, queue = QUEUE, retry = { maxAttempts: 1 }): WorkflowDefinitionInput {
  return {
    name: `wfd-${tag}`,
    steps: Object.entries(edges).map(([name, after]) => ({ name, queue, payload: `${tag}/${name}`, after, retry })),
    ...extra,
  };
}

/** Deliveries of one workflow run to the recording workers, by step name. */
function receiptsOf(runId: string): Map<string, Receipt[]> {
  const out = new Map<string, Receipt[]>();
  for (const r of [...worker.recorder.receipts, ...narrow.recorder.receipts]) {
    if (r.run.workflow?.workflowRunId !== runId) continue;
    const list = out.get(r.run.workflow.step) ?? [];
    list.push(r);
    out.set(r.run.workflow.step, list);
  }
  return out;
}

/** The only delivery of a step (fails the test if there were others). */
function onlyReceipt(runId: string, step: string): Receipt {
  const list = receiptsOf(runId).get(step) ?? [];
  expect(list.length, `deliveries of step ${step}`).toBe(1);
  return list[0];
}

const waitForState = (id: string, states: WorkflowRunInfo['state'][], timeoutMs = 15_000): Promise<WorkflowRunWithSteps> =>
  waitForWorkflowState(client, id, states, timeoutMs);

const stateOf = (r: WorkflowRunWithSteps): Record<string, string> => Object.fromEntries(r.steps.map((s) => [s.name, s.state]));

function stepOf(r: WorkflowRunWithSteps, name: string): WorkflowStepInfo {
  const s = r.steps.find((x) => x.name === name);
  if (!s) throw new Error(`workflow run ${r.run.id} has no step ${name}`);
  return s;
}

const timesOf = (s: WorkflowStepInfo): string =>
  `${s.name}: ready ${s.readyAtMs} started ${s.startedAtMs} fired ${s.firedAtMs} finished ${s.finishedAtMs} lag ${s.lagMs}`;

/** The bytes 0, 1, …, 250, 0, 1, … (a pattern a truncation or a shift would break). */
const patterned = (n: number, mul = 1): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * mul) % 251));

const cli = (...args: string[]): Promise<CliResult> => runCli((daemon as DaemonProcess).address, args);

/**
 * A started-at-an-instant run, once it succeeded: its root was made at the
 * start, due at the instant, and reached the worker only at/after it; its
 * child after the root's handler finished.
 */
async function expectStartedAt(started: WorkflowRunInfo, at: number): Promise<void> {
  expect(started.startAtMs).toBe(at);
  // The start was made before its instant (else this test proves nothing about waiting for it).
  expect(started.createdAtMs, 'the start came after its instant: too slow a machine for this test').toBeLessThan(at);
  const done = await waitForState(started.id, ['succeeded']);
  const root = stepOf(done, 'root');
  const child = stepOf(done, 'child');
  const r = onlyReceipt(started.id, 'root');
  // Not delivered before the instant (the worker's clock and the daemon's are this machine's).
  expect(r.receivedAt, timesOf(root)).toBeGreaterThanOrEqual(at);
  expect(r.run.dueAtMs).toBe(at);
  expect(r.run.firedAtMs).toBeGreaterThanOrEqual(at);
  // GetWorkflowRun: its run was made at the start (the step is running while its run waits), fired at/after the instant.
  expect(root.startedAtMs, timesOf(root)).toBeLessThan(at);
  expect(root.readyAtMs, timesOf(root)).toBeLessThanOrEqual(root.startedAtMs);
  expect(root.firedAtMs, timesOf(root)).toBeGreaterThanOrEqual(at);
  expect(root.firedAtMs).toBe(r.run.firedAtMs);
  expect(root.lagMs).toBeCloseTo(root.firedAtMs - at, 0);
  expect((await client.getRun(root.runId)).dueAtMs).toBe(at);
  // The child: after its parent's handler finished, due no earlier than the instant.
  const c = onlyReceipt(started.id, 'child');
  expect(c.receivedAt).toBeGreaterThanOrEqual(handlerEnd.get(r.run.runId) ?? Infinity);
  expect(c.run.dueAtMs).toBeGreaterThanOrEqual(at);
  expect(child.readyAtMs, timesOf(child)).toBeGreaterThanOrEqual(at);
  expect(c.run.workflow?.parentOutputs.root?.toString()).toBe('out:root');
}

// -------------------------------------------------------- raw Work stream ---

interface RawStream {
  runs: DeliveredRun__Output[];
  acks: Ack__Output[];
  subscribed: boolean;
  error: grpc.ServiceError | null;
  send(req: WorkRequest): void;
  close(): Promise<void>;
}

/** A Work stream spoken by hand (as a worker written without timelane's client would). */
function openRaw(queue: string): RawStream {
  const call = raw.work();
  const s: RawStream = {
    runs: [],
    acks: [],
    subscribed: false,
    error: null,
    send: (req) => void call.write(req),
    close: async () => {
      call.end();
      await new Promise<void>((resolve) => {
        if (s.error) return resolve();
        call.on('status', () => resolve());
        call.on('error', () => resolve());
      });
    },
  };
  call.on('data', (m: WorkResponse__Output) => {
    if (m.subscribed) s.subscribed = true;
    if (m.runs) s.runs.push(...m.runs.runs);
    if (m.run) s.runs.push(m.run);
    if (m.ack) s.acks.push(m.ack);
    if (m.acks) s.acks.push(...m.acks.acks);
  });
  call.on('error', (e: grpc.ServiceError) => (s.error = e));
  s.send({ subscribe: { queues: [queue], maxInFlight: 10, workerId: 'raw-details', batchRuns: true } });
  return s;
}

const refOf = (r: DeliveredRun__Output) => ({ runId: r.runId, fence: r.fence, delivery: r.delivery, shard: r.shard });

describe('workflow details', () => {
  it('starts a run at an instant (the client\'s `at`): its root is not delivered before it, then is', async () => {
    const at = Date.now() + 1_500;
    const started = await client.startWorkflow({ definition: definition('at', { root: [], child: ['root'] }), at: new Date(at) });
    await expectStartedAt(started, at);
  });

  it('starts a run at an instant from the CLI (`workflow start --file F --at ISO`)', async () => {
    const file = path.join(tmpdir(), `wfd-at-${process.pid}.json`);
    writeFileSync(file, JSON.stringify(definition('cli-at', { root: [], child: ['root'] })));
    try {
      // A CLI process takes a while to start on a busy machine: a wider margin than the client's.
      const at = Date.now() + 5_000;
      const res = await cli('workflow', 'start', '--file', file, '--at', new Date(at).toISOString(), '--json');
      expect(res.code, res.stderr).toBe(0);
      await expectStartedAt(JSON.parse(res.stdout) as WorkflowRunInfo, at);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('refuses a Complete over 64 KiB on the Work stream naming complete.output; nothing written, the stream and the run go on; exactly 64 KiB succeeds the step', async () => {
    const s = openRaw(RAW);
    try {
      expect(await waitUntil(() => s.subscribed || s.error !== null, 5_000, 10)).toBe(true);
      expect(s.error).toBeNull();
      const started = await client.startWorkflow({ definition: definition('raw', { first: [], second: ['first'] }, {}, RAW) });
      const runOf = (step: string): DeliveredRun__Output | undefined =>
        s.runs.find((r) => r.workflow?.workflowRunId === started.id && r.workflow.step === step);
      const acksOf = (runId: string): Ack__Output[] => s.acks.filter((a) => a.runId === runId);
      expect(await waitUntil(() => runOf('first') !== undefined || s.error !== null, 10_000, 10)).toBe(true);
      const first = runOf('first') as DeliveredRun__Output;

      // One byte over: refused, naming the field and the limit.
      s.send({ complete: { ref: refOf(first), output: Buffer.alloc(LIMIT + 1, 0x61) } });
      expect(await waitUntil(() => acksOf(first.runId).length >= 1 || s.error !== null, 5_000, 10)).toBe(true);
      const refused = acksOf(first.runId)[0];
      expect(refused.code, refused.message).toBe(INVALID_ARGUMENT);
      expect(refused.message).toBe(`complete.output: must be at most ${LIMIT} bytes (got ${LIMIT + 1})`);
      // Nothing written: the step is still running (no output), its child pending, its run still fired; the stream is open.
      const mid = await client.getWorkflowRun(started.id, { outputs: true });
      expect(stateOf(mid)).toEqual({ first: 'running', second: 'pending' });
      expect(stepOf(mid, 'first').outputBytes).toBe(0);
      expect(stepOf(mid, 'first').output).toBeNull();
      expect(mid.run.state).toBe('running');
      expect((await client.getRun(first.runId)).status).toBe('fired');
      expect(runOf('second')).toBeUndefined();
      expect(s.error).toBeNull();

      // The same delivery answered with exactly the limit: accepted, and the child gets those bytes.
      const exact = patterned(LIMIT);
      s.send({ complete: { ref: refOf(first), output: exact } });
      expect(await waitUntil(() => acksOf(first.runId).length >= 2 || s.error !== null, 5_000, 10)).toBe(true);
      const accepted = acksOf(first.runId)[1];
      expect(accepted.code, accepted.message).toBe(grpc.status.OK);
      expect(await waitUntil(() => runOf('second') !== undefined || s.error !== null, 10_000, 10)).toBe(true);
      const second = runOf('second') as DeliveredRun__Output;
      const handed = second.workflow?.parentOutputs.first;
      expect(handed?.length).toBe(LIMIT);
      expect(handed?.equals(exact)).toBe(true);
      s.send({ complete: { ref: refOf(second) } });
      expect(await waitUntil(() => acksOf(second.runId).length >= 1 || s.error !== null, 5_000, 10)).toBe(true);
      expect(acksOf(second.runId)[0].code).toBe(grpc.status.OK);

      const done = await waitForState(started.id, ['succeeded']);
      const f = stepOf(done, 'first');
      expect(f.outputBytes).toBe(LIMIT);
      expect(f.output?.equals(exact)).toBe(true);
      expect(f.attempts).toBe(1);
      expect(s.runs.filter((r) => r.runId === first.runId)).toHaveLength(1); // answered, not redelivered
      expect(s.error).toBeNull();
      expect(daemonProblems(daemon as DaemonProcess)).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('fails a step whose handler returns more than 64 KiB (bytes, not characters): not retried, a clear error, no output; exactly 64 KiB reaches the child', async () => {
    const exact = patterned(LIMIT, 7);
    behaviours.set('size', async (run) => {
      switch (run.workflow?.step) {
        case 'big':
          return Buffer.alloc(LIMIT + 1, 0x62);
        case 'wide':
          return 'é'.repeat(LIMIT / 2 + 1); // 32,769 characters, 65,538 bytes of UTF-8
        case 'exact':
          return exact;
        default:
          return `out:${run.workflow?.step}`;
      }
    });
    // Three attempts allowed: an oversize output must not use them.
    const def = definition('size', { big: [], after_big: ['big'], wide: [], exact: [], after_exact: ['exact'] }, {}, QUEUE, { maxAttempts: 3 });
    const started = await client.startWorkflow({ definition: def });
    const done = await waitForState(started.id, ['failed']);
    expect(stateOf(done)).toEqual({ big: 'failed', after_big: 'upstream_failed', wide: 'failed', exact: 'succeeded', after_exact: 'succeeded' });
    for (const [name, bytes] of [['big', LIMIT + 1], ['wide', LIMIT + 2]] as const) {
      const st = stepOf(done, name);
      expect(st.error).toContain(`step output is ${bytes} bytes, over the ${LIMIT}-byte limit`);
      expect(st.outputBytes).toBe(0);
      expect(st.output).toBeNull();
      expect(st.attempts).toBe(1);
      const run = await client.getRun(st.runId);
      expect(run.status).toBe('dead');
      expect(run.deliveries).toBe(1);
      expect(run.error).toBe(st.error);
      onlyReceipt(started.id, name);
    }
    expect(receiptsOf(started.id).has('after_big')).toBe(false);
    const ex = stepOf(done, 'exact');
    expect(ex.outputBytes).toBe(LIMIT);
    expect(ex.output?.equals(exact)).toBe(true);
    const handed = onlyReceipt(started.id, 'after_exact').run.workflow?.parentOutputs.exact;
    expect(handed?.length).toBe(LIMIT);
    expect(handed?.equals(exact)).toBe(true);
  });

  it('GetWorkflowRun\'s times agree with the worker: ready ≤ started ≤ fired ≤ finished, a child ready after its parent finished, a step held by max_in_flight ready before it starts', async () => {
    behaviours.set('times', async (run) => {
      await work();
      return `out:${run.workflow?.step}`;
    });
    // a → b, and c: one step at a time, so c (ready from the start) waits for a slot.
    const started = await client.startWorkflow({ definition: definition('times', { a: [], b: ['a'], c: [] }, { maxInFlight: 1 }) });
    const done = await waitForState(started.id, ['succeeded']);
    for (const s of done.steps) {
      const t = timesOf(s);
      const r = onlyReceipt(started.id, s.name);
      expect(s.runId).toBe(r.run.runId);
      expect(s.readyAtMs, t).toBeGreaterThanOrEqual(started.createdAtMs);
      expect(s.readyAtMs, t).toBeLessThanOrEqual(s.startedAtMs);
      expect(s.startedAtMs, t).toBeLessThanOrEqual(s.firedAtMs);
      expect(s.firedAtMs, t).toBeLessThanOrEqual(s.finishedAtMs);
      expect(s.finishedAtMs, t).toBeLessThanOrEqual(done.run.finishedAtMs + 1);
      // fired_at: the hand-off the worker was told of, and the worker got it right after.
      expect(s.firedAtMs, t).toBe(r.run.firedAtMs);
      expect(r.receivedAt, t).toBeGreaterThanOrEqual(s.firedAtMs);
      expect(r.receivedAt - s.firedAtMs, t).toBeLessThan(1_000);
      // finished_at: the Complete's commit, after the handler's work ended (same machine, same clock).
      const end = handlerEnd.get(r.run.runId) as number;
      expect(s.finishedAtMs, t).toBeGreaterThanOrEqual(end);
      expect(s.finishedAtMs - end, t).toBeLessThan(1_000);
      expect(s.finishedAtMs - s.firedAtMs, t).toBeGreaterThanOrEqual(WORK_MS - 2);
      // lag = fired − due of its run (the due time the worker saw).
      expect(s.lagMs, t).toBeCloseTo(s.firedAtMs - r.run.dueAtMs, 0);
    }
    const [a, b, c] = ['a', 'b', 'c'].map((n) => stepOf(done, n));
    // b became ready when a finished, not before; it was handed out after a's handler ended.
    expect(b.readyAtMs, `${timesOf(a)}; ${timesOf(b)}`).toBeGreaterThanOrEqual(a.finishedAtMs);
    expect(onlyReceipt(started.id, 'b').receivedAt).toBeGreaterThanOrEqual(handlerEnd.get(a.runId) as number);
    // One step at a time: each started once the one before it finished.
    const byStart = [...done.steps].sort((x, y) => x.startedAtMs - y.startedAtMs);
    expect(byStart[0].name).toBe('a');
    for (let i = 1; i < byStart.length; i++) expect(byStart[i].startedAtMs, `${timesOf(byStart[i - 1])}; ${timesOf(byStart[i])}`).toBeGreaterThanOrEqual(byStart[i - 1].finishedAtMs);
    // c was ready at the start, and started only after a's work: its ready and start times differ.
    expect(c.readyAtMs, timesOf(c)).toBeLessThanOrEqual(a.startedAtMs);
    expect(c.startedAtMs - c.readyAtMs, `${timesOf(a)}; ${timesOf(c)}`).toBeGreaterThanOrEqual(WORK_MS - 2);
  });

  it('lag is fired − due even for a step that waited for worker credit', async () => {
    behaviours.set('credit', async () => {
      await work();
    });
    // Two roots due at once on a queue whose worker has one slot: one waits for the other's Complete.
    const started = await client.startWorkflow({ definition: definition('credit', { p: [], q: [] }, {}, NARROW) });
    const done = await waitForState(started.id, ['succeeded']);
    const [first, second] = [...done.steps].sort((x, y) => x.firedAtMs - y.firedAtMs);
    const rf = onlyReceipt(started.id, first.name);
    const rs = onlyReceipt(started.id, second.name);
    expect(rs.run.dueAtMs).toBe(rf.run.dueAtMs);
    for (const [s, r] of [[first, rf], [second, rs]] as const) {
      expect(s.firedAtMs, timesOf(s)).toBe(r.run.firedAtMs);
      expect(s.lagMs, timesOf(s)).toBeCloseTo(s.firedAtMs - r.run.dueAtMs, 0);
      expect(s.startedAtMs, timesOf(s)).toBeLessThanOrEqual(s.firedAtMs);
    }
    // The second was handed out once the first's handler had ended (the slot freed): its lag is that wait.
    const end = handlerEnd.get(rf.run.runId) as number;
    expect(second.firedAtMs, `${timesOf(first)}; ${timesOf(second)}`).toBeGreaterThanOrEqual(end);
    expect(second.lagMs, `${timesOf(first)}; ${timesOf(second)}`).toBeGreaterThanOrEqual(WORK_MS - 2);
    expect(rs.receivedAt).toBeGreaterThanOrEqual(second.firedAtMs);
  });
});
