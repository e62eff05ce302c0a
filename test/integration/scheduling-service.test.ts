/**
 * SchedulingService against real Postgres: dedupe (across calls and within
 * one batch), batches all-or-nothing, get/list with pagination, cancel
 * semantics, reschedule, and how a committed near-due run reaches its owner:
 * offerLocal for shards this daemon owns, pg_notify (delivered on commit, and
 * only on commit) for the others.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientConfig } from '../../daemon/db/pool.js';
import type { DeliveryMode } from '../../daemon/db/queries/columns.js';
import { TimelaneError } from '../../daemon/errors.js';
import { SchedulingService } from '../../daemon/scheduling/scheduling-service.js';
import { channelFor, decodeNearDue, type NearDueRun } from '../../daemon/slow/notifications.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { track, untrack } from '../helpers/tracked.js';
import { claimDirect, runStates, scheduleInput, waitFor } from '../helpers/daemon-parts.js';

const SHARDS = 8;
const WINDOW = 5_000;
const SCHEMA = 'timelane';

let db: TestDatabase;
let listener: pg.Client;
const notified: NearDueRun[] = [];
let offered: NearDueRun[] = [];
let owned: (shard: number) => boolean = () => false;

let svc: SchedulingService;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  listener = track(new pg.Client(clientConfig(db.opts)), 'LISTEN client');
  await listener.connect();
  listener.on('notification', (msg) => {
    if (msg.channel === channelFor(SCHEMA) && msg.payload) notified.push(...decodeNearDue(msg.payload));
  });
  await listener.query(`LISTEN ${channelFor(SCHEMA)}`);
  svc = new SchedulingService({
    db: db.pool,
    schema: SCHEMA,
    shardCount: SHARDS,
    windowMs: WINDOW,
    wallNow: () => Date.now(),
    ownsShard: (s) => owned(s),
    offerLocal: (run) => offered.push(run),
  });
});

afterAll(async () => {
  if (listener) {
    await listener.end();
    untrack(listener);
  }
  await db?.drop();
});

beforeEach(() => {
  notified.length = 0;
  offered = [];
  owned = () => false;
});

const ns = (): string => `ns-${randomUUID().slice(0, 8)}`;

/** Waits until notifications stop arriving (nothing for 150 ms). */
async function quiet(): Promise<void> {
  let last = -1;
  while (last !== notified.length) {
    last = notified.length;
    await sleep(150);
  }
}

async function countJobs(namespace: string): Promise<{ jobs: number; runs: number }> {
  const { rows } = await db.pool.query<{ jobs: number; runs: number }>(
    `SELECT (SELECT count(*)::int FROM jobs WHERE namespace = $1) AS jobs,
            (SELECT count(*)::int FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.namespace = $1) AS runs`,
    [namespace],
  );
  return rows[0];
}

describe('dedupe', () => {
  it('the same key twice returns the same job, the second time deduplicated', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000;
    const [first] = await svc.schedule([scheduleInput(due, { namespace, dedupeKey: 'k1' })]);
    const [second] = await svc.schedule([scheduleInput(due + 1_000, { namespace, dedupeKey: 'k1', payload: Buffer.from('other') })]);
    expect(first.deduplicated).toBe(false);
    expect(second.deduplicated).toBe(true);
    expect(second.job.id).toBe(first.job.id);
    expect(second.run.id).toBe(first.run.id);
    expect(second.run.due_at_ms).toBe(due); // the original request wins
    expect(second.job.payload.toString()).toBe('p');
    expect(await countJobs(namespace)).toEqual({ jobs: 1, runs: 1 });
  });

  it('the same key twice within ONE batch makes one job; both results name it', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000;
    const res = await svc.schedule([
      scheduleInput(due, { namespace, dedupeKey: 'same' }),
      scheduleInput(due, { namespace, dedupeKey: 'other' }),
      scheduleInput(due + 5, { namespace, dedupeKey: 'same' }),
    ]);
    expect(res.map((r) => r.deduplicated)).toEqual([false, false, true]);
    expect(res[2].job.id).toBe(res[0].job.id);
    expect(res[2].run.id).toBe(res[0].run.id);
    expect(res[1].job.id).not.toBe(res[0].job.id);
    expect(await countJobs(namespace)).toEqual({ jobs: 2, runs: 2 });
  });

  it('keys are per namespace, and jobs without a key never dedupe', async () => {
    const [a, b] = [ns(), ns()];
    const due = Date.now() + 60_000;
    const res = await svc.schedule([
      scheduleInput(due, { namespace: a, dedupeKey: 'k' }),
      scheduleInput(due, { namespace: b, dedupeKey: 'k' }),
      scheduleInput(due, { namespace: a }),
      scheduleInput(due, { namespace: a }),
    ]);
    expect(res.every((r) => !r.deduplicated)).toBe(true);
    expect(new Set(res.map((r) => r.job.id)).size).toBe(4);
    expect(await countJobs(a)).toEqual({ jobs: 3, runs: 3 });
  });
});

describe('batches are all or nothing', () => {
  const bad = (namespace: string, due: number) => scheduleInput(due, { namespace, delivery: 'sometimes' as DeliveryMode });

  it('a batch with one row violating a constraint inserts nothing (plain insert)', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000; // beyond the window: no notify, no transaction
    await expect(svc.schedule([scheduleInput(due, { namespace }), bad(namespace, due), scheduleInput(due, { namespace, dedupeKey: 'x' })])).rejects.toThrow();
    expect(await countJobs(namespace)).toEqual({ jobs: 0, runs: 0 });
    // The dedupe key was not taken by the failed batch.
    const [ok] = await svc.schedule([scheduleInput(due, { namespace, dedupeKey: 'x' })]);
    expect(ok.deduplicated).toBe(false);
  });

  it('a near-due batch (insert + notify in one transaction) with one bad row inserts nothing and notifies nothing', async () => {
    const namespace = ns();
    const due = Date.now() + 500;
    const rows = [...Array.from({ length: 20 }, () => scheduleInput(due, { namespace })), bad(namespace, due)];
    await expect(svc.schedule(rows)).rejects.toThrow();
    await quiet();
    expect(await countJobs(namespace)).toEqual({ jobs: 0, runs: 0 });
    expect(notified).toEqual([]);
    expect(offered).toEqual([]);
  });

  it('a NOT NULL violation in the last row also rolls back the rest', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000;
    await expect(
      svc.schedule([scheduleInput(due, { namespace }), scheduleInput(due, { namespace, queue: null as unknown as string })]),
    ).rejects.toThrow();
    expect(await countJobs(namespace)).toEqual({ jobs: 0, runs: 0 });
  });
});

describe('get and list', () => {
  it('getJob returns the job and its runs; getRun one run; unknown ids are not_found', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000;
    const [s] = await svc.schedule([scheduleInput(due, { namespace, queue: 'get-q', priority: 7, leaseMs: 12_345 })]);
    const { job, runs } = await svc.getJob(s.job.id);
    expect(job).toMatchObject({ id: s.job.id, namespace, queue: 'get-q', priority: 7, lease_ms: 12_345, status: 'active', shard: s.run.shard });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: s.run.id, attempt: 1, status: 'scheduled', due_at_ms: due, idempotency_key: `${s.job.id}:${due}` });
    // What schedule() returned matches what is stored.
    expect(s.run).toEqual(runs[0]);
    expect(await svc.getRun(s.run.id)).toEqual(runs[0]);
    const missingJob = await svc.getJob(randomUUID()).catch((e: unknown) => e);
    expect(missingJob).toBeInstanceOf(TimelaneError);
    expect((missingJob as TimelaneError).kind).toBe('not_found');
    const missingRun = await svc.getRun(987_654_321).catch((e: unknown) => e);
    expect((missingRun as TimelaneError).kind).toBe('not_found');
  });

  it('pages (afterId = last id of the previous page) cover every run exactly once, in id order', async () => {
    const queue = `page-${randomUUID().slice(0, 8)}`;
    const due = Date.now() + 60_000;
    const made = await svc.schedule(Array.from({ length: 23 }, (_, i) => scheduleInput(due + i, { queue })));
    // Noise in other queues, interleaved in id order.
    await svc.schedule(Array.from({ length: 5 }, () => scheduleInput(due, { queue: `${queue}-other` })));
    const more = await svc.schedule(Array.from({ length: 4 }, () => scheduleInput(due, { queue })));
    const expected = [...made, ...more].map((r) => r.run.id).sort((a, b) => a - b);

    const seen: number[] = [];
    let afterId = 0;
    let pages = 0;
    for (;;) {
      const page = await svc.listRuns({ jobId: null, queue, status: null, afterId, limit: 7 });
      pages++;
      seen.push(...page.map((r) => r.id));
      expect(page.every((r) => r.queue === queue)).toBe(true);
      if (page.length < 7) break;
      afterId = page[page.length - 1].id;
    }
    expect(seen).toEqual(expected);
    expect(pages).toBe(Math.floor(27 / 7) + 1);

    const byJob = await svc.listRuns({ jobId: made[3].job.id, queue: null, status: null, afterId: 0, limit: 100 });
    expect(byJob.map((r) => r.id)).toEqual([made[3].run.id]);
    await svc.cancelJob(made[0].job.id, () => undefined);
    const cancelled = await svc.listRuns({ jobId: null, queue, status: 'cancelled', afterId: 0, limit: 100 });
    expect(cancelled.map((r) => r.id)).toEqual([made[0].run.id]);
    const scheduled = await svc.listRuns({ jobId: null, queue, status: 'scheduled', afterId: 0, limit: 100 });
    expect(scheduled).toHaveLength(26);
  });
});

describe('cancel', () => {
  it('cancels a scheduled job once: runs_cancelled 1, then 0, and tells the caller which run', async () => {
    const [s] = await svc.schedule([scheduleInput(Date.now() + 60_000)]);
    const told: Array<[number, number]> = [];
    const first = await svc.cancelJob(s.job.id, (runId, shard) => told.push([runId, shard]));
    expect(first.runsCancelled).toBe(1);
    expect(first.job.status).toBe('cancelled');
    expect(told).toEqual([[s.run.id, s.run.shard]]);
    expect((await svc.getRun(s.run.id)).status).toBe('cancelled');

    const again = await svc.cancelJob(s.job.id, (runId, shard) => told.push([runId, shard]));
    expect(again.runsCancelled).toBe(0);
    expect(again.job.status).toBe('cancelled');
    expect(told).toHaveLength(1);
  });

  it('a job whose run already fired is not cancelled: runs_cancelled 0, job still active, run still fired', async () => {
    const [s] = await svc.schedule([scheduleInput(Date.now() - 10)]);
    const { rows } = await db.pool.query<{ fence: number }>(
      `UPDATE shards SET fence = fence + 1, owner = 'claimer' WHERE shard = $1 RETURNING fence`,
      [s.run.shard],
    );
    const claimed = await claimDirect(db.pool, [s.run.id], s.run.shard, rows[0].fence);
    expect(claimed).toHaveLength(1);
    const out = await svc.cancelJob(s.job.id, () => expect.fail('nothing was cancelled'));
    expect(out.runsCancelled).toBe(0);
    expect(out.job.status).toBe('active');
    expect((await runStates(db.pool, [s.run.id])).get(s.run.id)?.status).toBe('fired');
  });

  it('cancelling an unknown job is not_found', async () => {
    const err = await svc.cancelJob(randomUUID(), () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimelaneError);
    expect((err as TimelaneError).kind).toBe('not_found');
  });
});

describe('reaching the owner of a near-due run', () => {
  it('notifies (on commit) for near-due runs of shards it does not own, offers locally for those it owns', async () => {
    owned = (s) => s % 2 === 0;
    const now = Date.now();
    const res = await svc.schedule([
      ...Array.from({ length: 40 }, (_, i) => scheduleInput(now + 1_000 + i, { priority: i % 3 })),
      ...Array.from({ length: 10 }, () => scheduleInput(now + WINDOW + 60_000)), // beyond the window
    ]);
    const near = res.slice(0, 40).map((r) => r.run);
    const far = res.slice(40).map((r) => r.run);
    const asNearDue = (r: { id: number; shard: number; due_at_ms: number; priority: number }): NearDueRun => ({
      runId: r.id,
      shard: r.shard,
      dueAtMs: r.due_at_ms,
      priority: r.priority,
    });
    const byId = (a: NearDueRun, b: NearDueRun) => a.runId - b.runId;
    const remoteNear = near.filter((r) => r.shard % 2 === 1).map(asNearDue).sort(byId);
    const localAll = [...near, ...far].filter((r) => r.shard % 2 === 0).map(asNearDue).sort(byId);
    expect(remoteNear.length).toBeGreaterThan(0);
    expect(localAll.length).toBeGreaterThan(0);

    await waitFor(() => notified.length >= remoteNear.length, 3_000, 'notifications');
    await quiet();
    // Exactly the near-due runs on shards owned elsewhere: no owned shard, nothing beyond the window.
    expect([...notified].sort(byId)).toEqual(remoteNear);
    // Everything on owned shards goes to the local loader (it decides what is inside its window).
    expect([...offered].sort(byId)).toEqual(localAll);
  });

  it('sends nothing when every shard is owned here', async () => {
    owned = () => true;
    const res = await svc.schedule(Array.from({ length: 20 }, () => scheduleInput(Date.now() + 500)));
    await quiet();
    expect(notified).toEqual([]);
    expect(offered.map((r) => r.runId).sort((a, b) => a - b)).toEqual(res.map((r) => r.run.id).sort((a, b) => a - b));
  });

  it('a deduplicated request notifies and offers nothing', async () => {
    const namespace = ns();
    const [first] = await svc.schedule([scheduleInput(Date.now() + 500, { namespace, dedupeKey: 'once' })]);
    await quiet();
    notified.length = 0;
    offered = [];
    owned = () => true;
    const [again] = await svc.schedule([scheduleInput(Date.now() + 500, { namespace, dedupeKey: 'once' })]);
    expect(again.deduplicated).toBe(true);
    expect(again.job.id).toBe(first.job.id);
    await quiet();
    expect(notified).toEqual([]);
    expect(offered).toEqual([]);
  });

  it('reschedule tells the owner the same way; a job with no scheduled run is failed_precondition', async () => {
    const [a] = await svc.schedule([scheduleInput(Date.now() + 60_000)]);
    owned = (s) => s !== a.run.shard;
    const due = Date.now() + 800;
    const moved = await svc.rescheduleJob(a.job.id, due);
    expect(moved).toMatchObject({ id: a.run.id, due_at_ms: due, status: 'scheduled', idempotency_key: `${a.job.id}:${due}` });
    await waitFor(() => notified.length > 0, 3_000, 'the reschedule notification');
    await quiet();
    expect(notified).toEqual([{ runId: a.run.id, shard: a.run.shard, dueAtMs: due, priority: 0 }]);
    expect(offered).toEqual([]);

    notified.length = 0;
    owned = () => true;
    const later = Date.now() + 90_000;
    await svc.rescheduleJob(a.job.id, later);
    await quiet();
    expect(notified).toEqual([]);
    expect(offered).toEqual([{ runId: a.run.id, shard: a.run.shard, dueAtMs: later, priority: 0 }]);

    await svc.cancelJob(a.job.id, () => undefined);
    const err = await svc.rescheduleJob(a.job.id, Date.now() + 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimelaneError);
    expect((err as TimelaneError).kind).toBe('failed_precondition');
    expect((err as TimelaneError).message).toMatch(/cancelled/);
  });
});
