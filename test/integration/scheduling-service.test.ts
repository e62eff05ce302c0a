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
import { channelFor, decodeNearDue } from '../../daemon/slow/notifications.js';
import type { RunRef } from '../../daemon/run-ref.js';
import { RunRouter } from '../../daemon/engine/router.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { track, untrack } from '../helpers/tracked.js';
import { claimDirect, runStates, scheduleInput, waitFor } from '../helpers/daemon-parts.js';

const SHARDS = 8;
const WINDOW = 5_000;
const SCHEMA = 'timelane';

let db: TestDatabase;
let listener: pg.Client;
const notified: RunRef[] = [];
const stopped: number[] = [];
let offered: RunRef[] = [];
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
    router: new RunRouter({ schema: SCHEMA, windowMs: WINDOW, wallNow: () => Date.now(), owns: (s) => owned(s), offerLocal: (run) => offered.push(run), cancelLocal: (runId) => stopped.push(runId) }),
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
    expect((await svc.getJob(second.job.id)).job.payload.toString()).toBe('p');
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
    // What schedule() returned (references only) matches what is stored.
    expect(runs[0]).toMatchObject(s.run);
    expect(job).toMatchObject(s.job);
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

  it('a job whose run already fired: runs_cancelled 0, runs_cancelling 1 (its worker is told), job cancelled, run still fired', async () => {
    const [s] = await svc.schedule([scheduleInput(Date.now() - 10)]);
    const { rows } = await db.pool.query<{ fence: number }>(
      `UPDATE shards SET fence = fence + 1, owner = 'claimer' WHERE shard = $1 RETURNING fence`,
      [s.run.shard],
    );
    const claimed = await claimDirect(db.pool, [s.run.id], s.run.shard, rows[0].fence);
    expect(claimed).toHaveLength(1);
    owned = () => true;
    stopped.length = 0;
    const out = await svc.cancelJob(s.job.id, () => expect.fail('nothing was cancelled before firing'));
    expect(out.runsCancelled).toBe(0);
    expect(out.runsCancelling).toBe(1);
    expect(out.job.status).toBe('cancelled');
    expect(stopped).toEqual([s.run.id]); // the owner tells the worker holding it
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
    const asNearDue = (r: { id: number; shard: number; due_at_ms: number; priority: number }): RunRef => ({
      runId: r.id,
      shard: r.shard,
      dueAtMs: r.due_at_ms,
      priority: r.priority,
    });
    const byId = (a: RunRef, b: RunRef) => a.runId - b.runId;
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

describe('reschedule of a retry', () => {
  it('moves the retry but keeps its idempotency key: the occurrence is the same one', async () => {
    const first = Date.now() + 60_000;
    const [a] = await svc.schedule([scheduleInput(first)]);
    const key = `${a.job.id}:${first}`;
    // As a retryable Fail leaves it: attempt 2 of the same occurrence, waiting for its backoff.
    await db.pool.query(`UPDATE runs SET attempt = 2 WHERE id = $1`, [a.run.id]);
    const due = Date.now() + 120_000;
    const moved = await svc.rescheduleJob(a.job.id, due);
    // Before: the key became job:due, so a worker that keyed its effect on it applied it twice.
    expect(moved).toMatchObject({ id: a.run.id, attempt: 2, due_at_ms: due, idempotency_key: key });
  });
});

describe('what a batch stores', () => {
  it('per-row and shared columns, payloads of mixed sizes and dedupe keys that need escaping, byte for byte', async () => {
    const namespace = ns();
    const due = Date.now() + 60_000;
    const keys = ['a"b', 'c\\d', 'e,f', '{g}', 'NULL', ' h ', null];
    const inputs = keys.map((k, i) =>
      scheduleInput(due + i, {
        namespace,
        queue: i % 2 ? 'odd' : 'even',
        priority: i - 3,
        delivery: i === 5 ? 'at_most_once' : 'at_least_once',
        payload: Buffer.alloc(i * 700, i),
        dedupeKey: k,
        leaseMs: 10_000 + i,
      }),
    );
    const res = await svc.schedule(inputs);
    expect(res.every((r) => !r.deduplicated)).toBe(true);
    for (const [i, r] of res.entries()) {
      const { job, runs } = await svc.getJob(r.job.id);
      expect(job).toMatchObject({ namespace, queue: i % 2 ? 'odd' : 'even', priority: i - 3, dedupe_key: keys[i], lease_ms: 10_000 + i, delivery: inputs[i].delivery });
      expect(job.payload.equals(inputs[i].payload)).toBe(true);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ id: r.run.id, queue: job.queue, priority: i - 3, due_at_ms: due + i, status: 'scheduled' });
    }
    // Run ids follow request order.
    expect(res.map((r) => r.run.id)).toEqual([...res.map((r) => r.run.id)].sort((a, b) => a - b));
  });
});

describe('results name the right rows', () => {
  it.each([
    ['without dedupe keys', false],
    ['with dedupe keys', true],
  ])('1000 requests %s: each result names the run of its own job, with its own due time, as stored', async (_name, keyed) => {
    const namespace = ns();
    const base = Date.now() + 60_000;
    // Due times out of request order, so a shuffled mapping could not go unnoticed.
    const dues = Array.from({ length: 1000 }, (_, i) => base + ((i * 7919) % 1000) * 3);
    const res = await svc.schedule(dues.map((d, i) => scheduleInput(d, { namespace, ...(keyed && i % 10 === 0 ? { dedupeKey: `k${i}` } : {}) })));
    const { rows } = await db.pool.query<{ id: number; job_id: string; shard: number; due_at_ms: number }>(
      `SELECT r.id, r.job_id, r.shard, (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.namespace = $1`,
      [namespace],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.size).toBe(1000);
    res.forEach((r, i) => expect(byId.get(r.run.id)).toEqual({ id: r.run.id, job_id: r.job.id, shard: r.job.shard, due_at_ms: dues[i] }));
    expect(res.every((r, i) => r.run.due_at_ms === dues[i])).toBe(true);
  });
});

describe('batch idempotency key', () => {
  const batchRows = async (namespace: string): Promise<number> =>
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schedule_batches WHERE namespace = $1', [namespace])).rows[0].n;

  it('a resent batch is replayed, not applied: same references, nothing inserted, nobody told twice', async () => {
    const namespace = ns();
    owned = (s) => s % 2 === 0;
    const now = Date.now();
    const [existing] = await svc.schedule([scheduleInput(now + 60_000, { namespace, dedupeKey: 'k' })]);
    await quiet();
    notified.length = 0;
    offered = [];
    const inputs = Array.from({ length: 50 }, (_, i) => scheduleInput(now + 1_000 + i, { namespace, ...(i === 3 || i === 9 ? { dedupeKey: 'k' } : {}), ...(i === 4 ? { dedupeKey: 'new' } : {}) }));
    inputs.push(scheduleInput(now + 2_000, { namespace, dedupeKey: 'new' })); // deduplicated within the batch
    const first = await svc.scheduleBatch(inputs, 'b-1');
    expect(first.replayed).toBe(false);
    expect(first.scheduled[3]).toMatchObject({ deduplicated: true, job: { id: existing.job.id } });
    expect(first.scheduled[50]).toMatchObject({ deduplicated: true, job: { id: first.scheduled[4].job.id } });
    await waitFor(() => notified.length > 0, 3_000, 'notifications');
    await quiet();
    const told = { notified: notified.length, offered: offered.length };
    expect(told.notified + told.offered).toBe(48); // the 48 new runs, each told once

    const again = await svc.scheduleBatch(inputs, 'b-1');
    expect(again.replayed).toBe(true);
    expect(again.scheduled).toEqual(first.scheduled);
    await quiet();
    expect({ notified: notified.length, offered: offered.length }).toEqual(told);
    expect(await countJobs(namespace)).toEqual({ jobs: 49, runs: 49 }); // 48 + the one scheduled before
    expect(await batchRows(namespace)).toBe(1);
  });

  it('keys are per namespace; another count under a key is failed_precondition', async () => {
    const [a, b] = [ns(), ns()];
    const due = Date.now() + 60_000;
    const inA = await svc.scheduleBatch([scheduleInput(due, { namespace: a }), scheduleInput(due, { namespace: a })], 'same');
    const inB = await svc.scheduleBatch([scheduleInput(due, { namespace: b }), scheduleInput(due, { namespace: b })], 'same');
    expect(inB.replayed).toBe(false);
    expect(inB.scheduled[0].job.id).not.toBe(inA.scheduled[0].job.id);
    const err = await svc.scheduleBatch([scheduleInput(due, { namespace: a })], 'same').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimelaneError);
    expect((err as TimelaneError).kind).toBe('failed_precondition');
    expect((err as TimelaneError).message).toMatch(/committed with 2 requests, not 1/);
    expect(await countJobs(a)).toEqual({ jobs: 2, runs: 2 });
  });

  it('a keyed batch that fails in Postgres leaves the key free: the corrected batch applies', async () => {
    const namespace = ns();
    const due = Date.now() + 500; // near due on a shard owned elsewhere: the notify is in the transaction too
    const good = Array.from({ length: 5 }, () => scheduleInput(due, { namespace }));
    await expect(svc.scheduleBatch([...good, scheduleInput(due, { namespace, delivery: 'sometimes' as DeliveryMode })], 'fix-me')).rejects.toThrow();
    await quiet();
    expect(notified).toEqual([]);
    expect(await batchRows(namespace)).toBe(0);
    const ok = await svc.scheduleBatch([...good, scheduleInput(due, { namespace })], 'fix-me');
    expect(ok.replayed).toBe(false);
    expect(await countJobs(namespace)).toEqual({ jobs: 6, runs: 6 });
  });

  it('concurrent sends of one keyed batch: one applies, the others wait for it and replay it', async () => {
    const namespace = ns();
    const inputs = Array.from({ length: 200 }, (_, i) => scheduleInput(Date.now() + 60_000 + i, { namespace }));
    const outs = await Promise.all(Array.from({ length: 4 }, () => svc.scheduleBatch(inputs, 'racing')));
    expect(outs.filter((o) => !o.replayed)).toHaveLength(1);
    for (const o of outs) expect(o.scheduled).toEqual(outs[0].scheduled);
    expect(await countJobs(namespace)).toEqual({ jobs: 200, runs: 200 });
  });

  it('a key whose record expired cannot apply a second batch over the first (its job ids are taken)', async () => {
    const namespace = ns();
    const inputs = [scheduleInput(Date.now() + 60_000, { namespace })];
    await svc.scheduleBatch(inputs, 'old');
    await db.pool.query(`UPDATE schedule_batches SET created_at = now() - interval '25 hours' WHERE namespace = $1`, [namespace]);
    // Any keyed batch prunes expired records (a few at a time).
    await svc.scheduleBatch([scheduleInput(Date.now() + 60_000, { namespace })], 'pruner');
    expect(await batchRows(namespace)).toBe(1);
    const err = await svc.scheduleBatch(inputs, 'old').catch((e: unknown) => e);
    expect((err as TimelaneError).kind).toBe('failed_precondition');
    expect((err as TimelaneError).message).toMatch(/expired/);
    expect(await countJobs(namespace)).toEqual({ jobs: 2, runs: 2 });
    expect(await batchRows(namespace)).toBe(1); // the failed attempt took no key
  });
});
