/**
 * End to end: a workflow step delivered at most once whose worker never
 * answers (it died, or hangs) is not redelivered — that could run it twice —
 * and does not hold its workflow run open for ever either. Once its lease
 * has passed since the hand-off, the run ends dead (a dead letter), the
 * repair pass fails the step and cascades upstream_failed downstream,
 * independent branches finish, the workflow run ends failed, and a partial
 * re-run then completes it. Before the reaper's EXPIRE_UNANSWERED_STEPS, the
 * step stayed running and the run never ended. A plain at-most-once run is
 * left as it was (fired), and a step that waits in the daemon for a worker
 * longer than its lease is not touched: it runs when a worker comes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitForWorkflowState, waitUntil, type RecordingWorker } from '../helpers/e2e.js';

const SHARDS = 2;
const QUEUE = 'wf-amo';
/** A queue with no worker until the test starts one. */
const LATE_QUEUE = 'wf-amo-late';
const LEASE_MS = 1_000;

let db: TestDatabase;
const prefix = redisPrefix();
let daemon: DaemonProcess | undefined;
let client: TimelaneClient;
let worker: RecordingWorker;
let lateWorker: RecordingWorker | undefined;
/** While true, the `hold` step's handler never returns (its worker is as good as dead). */
let hang = true;
/** Handlers left hanging, released at the end so the worker can close. */
const hanging: (() => void)[] = [];

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  daemon = await startDaemon({
    databaseUrl: db.url,
    redisUrl: TEST_REDIS_URL,
    args: ['--member-id', 'wf-amo', '--redis-prefix', prefix, '--reap-interval-ms', '100', '--repair-interval-ms', '500'],
  });
  client = openClient(daemon.address);
  expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  worker = collectRuns({
    address: daemon.address,
    queues: [QUEUE],
    handler: async (run) => {
      const holds = run.workflow?.step === 'hold' || run.payload.toString() === 'plain-hang';
      if (holds && hang) await new Promise<void>((resolve) => hanging.push(resolve));
      return `out:${run.workflow?.step ?? ''}`;
    },
  });
});

afterAll(async () => {
  hanging.forEach((release) => release());
  await worker?.close();
  await lateWorker?.close();
  closeClient(client);
  await stopDaemon(daemon);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});


const deliveries = (runId: string, step: string): number =>
  worker.recorder.receipts.filter((r) => r.run.workflow?.workflowRunId === runId && r.run.workflow.step === step).length;

describe('an at-most-once workflow step whose worker never answers', () => {
  it('ends dead after its lease (never redelivered), fails the workflow run with a cascade, and a re-run completes it', async () => {
    // A plain at-most-once run whose handler hangs as long: left fired (only workflow steps are ended).
    const plain = await client.schedule({ queue: QUEUE, delayMs: 0, payload: 'plain-hang', delivery: 'at_most_once', leaseMs: LEASE_MS });
    const started = await client.startWorkflow({
      definition: {
        name: 'amo',
        steps: [
          { name: 'a', queue: QUEUE },
          // Three attempts allowed: an unanswered at-most-once delivery must still not be retried.
          { name: 'hold', queue: QUEUE, after: ['a'], delivery: 'at_most_once', leaseMs: LEASE_MS, retry: { maxAttempts: 3 } },
          { name: 'after', queue: QUEUE, after: ['hold'] },
          { name: 'solo', queue: QUEUE },
        ],
      },
    });
    const failed = await waitForWorkflowState(client, started.id, ['failed'], 15_000);
    const byName = new Map(failed.steps.map((s) => [s.name, s]));
    expect(Object.fromEntries(failed.steps.map((s) => [s.name, s.state]))).toEqual({ a: 'succeeded', hold: 'failed', after: 'upstream_failed', solo: 'succeeded' });
    expect(byName.get('hold')?.error).toMatch(/at-most-once step not answered within its lease/);
    // It ended no sooner than its lease after the hand-off: the expiry compares the daemon's recorded fired_at,
    // which is the hand-off time the worker was given, not the worker's own clock at receipt.
    const holdReceipt = worker.recorder.receipts.find((r) => r.run.workflow?.workflowRunId === started.id && r.run.workflow.step === 'hold');
    expect(holdReceipt).toBeDefined();
    const handedOffAtMs = holdReceipt!.run.firedAtMs;
    const holdRun = await client.getRun(holdReceipt!.run.runId);
    expect(holdRun.status).toBe('dead');
    expect(holdRun.firedAtMs).toBe(handedOffAtMs);
    expect(byName.get('hold')!.firedAtMs).toBe(handedOffAtMs);
    expect(holdRun.finishedAtMs).toBeGreaterThanOrEqual(handedOffAtMs + LEASE_MS);
    expect(byName.get('hold')!.finishedAtMs).toBeGreaterThanOrEqual(handedOffAtMs + LEASE_MS);
    const plainRun = await client.getRun(plain.run.id);
    expect(plainRun.status).toBe('fired');
    expect(Date.now() - plainRun.firedAtMs).toBeGreaterThan(LEASE_MS);
    expect(deliveries(started.id, 'hold')).toBe(1);
    expect(deliveries(started.id, 'after')).toBe(0);

    // A dead letter, like any run that died.
    const dead = await client.listDeadRuns({ queue: QUEUE });
    expect(dead.runs.map((r) => r.id)).toContain(holdReceipt!.run.runId);

    // The hung handlers are let go (their late answers match no live delivery); the re-run delivers `hold` afresh.
    hang = false;
    hanging.splice(0).forEach((release) => release());
    const retried = await client.retryWorkflowRun(started.id);
    expect(new Set(retried.stepsReset)).toEqual(new Set(['hold', 'after']));
    const done = await waitForWorkflowState(client, started.id, ['succeeded'], 15_000);
    expect(done.steps.every((s) => s.state === 'succeeded')).toBe(true);
    expect(deliveries(started.id, 'a')).toBe(1);
    expect(deliveries(started.id, 'solo')).toBe(1);
    expect(deliveries(started.id, 'hold')).toBe(2);
    expect(deliveries(started.id, 'after')).toBe(1);
  });

  it('a step waiting in the daemon for a worker longer than its lease is not touched, and runs when a worker comes', async () => {
    const started = await client.startWorkflow({
      definition: { name: 'amo-late', steps: [{ name: 'late', queue: LATE_QUEUE, delivery: 'at_most_once', leaseMs: LEASE_MS }] },
    });
    // Claimed (fired) and parked: no worker takes this queue yet.
    const fired = await waitUntil(async () => (await client.getWorkflowRun(started.id)).steps[0].state === 'running', 10_000, 50);
    expect(fired).toBe(true);
    // A non-event: three leases (and many reaper passes) go by with nobody to hand it to.
    await sleep(3 * LEASE_MS);
    const waiting = await client.getWorkflowRun(started.id);
    expect(waiting.run.state).toBe('running');
    expect(waiting.steps[0].state).toBe('running');
    lateWorker = collectRuns({ address: daemon!.address, queues: [LATE_QUEUE] });
    await waitForWorkflowState(client, started.id, ['succeeded'], 15_000);
    expect(lateWorker.recorder.receipts.filter((r) => r.run.workflow?.workflowRunId === started.id)).toHaveLength(1);
  });
});
