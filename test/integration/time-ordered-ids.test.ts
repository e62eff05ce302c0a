/**
 * New jobs, recurring jobs, workflow runs and workflow steps' jobs get
 * time-ordered ids (UUIDv7: daemon/ids.ts, and UUID_V7 in the statement that
 * starts a step), so
 * that each new key lands at the right edge of jobs_pkey, runs_job and
 * workflow_steps_job. Checked on real rows: the version, the millisecond the
 * id carries against when it was made, and that ids made later sort later.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UUID_V7 } from '../../daemon/db/queries/workflows.js';
import { RunRouter } from '../../daemon/engine/router.js';
import { RecurringService } from '../../daemon/recurring/recurring-service.js';
import { SchedulingService } from '../../daemon/scheduling/scheduling-service.js';
import { orderSteps, type StepSpec } from '../../daemon/workflows/definition.js';
import { WorkflowService } from '../../daemon/workflows/workflow-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { intervalRecurrence, scheduleInput } from '../helpers/daemon-parts.js';

const SHARDS = 4;
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let db: TestDatabase;
let scheduling: SchedulingService;

const router = (): RunRouter =>
  new RunRouter({ schema: 'timelane', windowMs: 5_000, wallNow: Date.now, owns: () => false, offerLocal: () => undefined, cancelLocal: () => undefined });

/** The Unix ms a UUIDv7 carries in its first 48 bits. */
const msOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

function expectTimeOrdered(ids: readonly string[], fromMs: number, toMs: number): void {
  for (const id of ids) {
    expect(id).toMatch(V7);
    expect(msOf(id)).toBeGreaterThanOrEqual(fromMs);
    expect(msOf(id)).toBeLessThanOrEqual(toMs);
  }
  expect(new Set(ids).size).toBe(ids.length);
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  scheduling = new SchedulingService({ db: db.pool, schema: 'timelane', shardCount: SHARDS, router: router() });
});
afterAll(async () => {
  await db?.drop();
});

describe('time-ordered ids', () => {
  it('one-shot jobs: v7 of the moment they were made; a later batch sorts after an earlier one; shards still spread', async () => {
    const before = Date.now();
    const first = await scheduling.schedule(Array.from({ length: 1_000 }, () => scheduleInput(Date.now() + 3_600_000)));
    const between = Date.now();
    await sleep(2); // the next batch is made in a later millisecond
    const second = await scheduling.schedule(Array.from({ length: 1_000 }, () => scheduleInput(Date.now() + 3_600_000)));
    const after = Date.now();
    expectTimeOrdered(first.map((s) => s.job.id), before, between);
    expectTimeOrdered(second.map((s) => s.job.id), between, after);
    const lastOfFirst = first.map((s) => s.job.id).sort().at(-1) as string;
    expect(second.every((s) => s.job.id > lastOfFirst)).toBe(true);
    // The same order in Postgres: the uuid type compares the bytes the strings spell.
    const { rows } = await db.pool.query<{ later: boolean }>(`SELECT (SELECT id FROM unnest($2::uuid[]) AS id ORDER BY id LIMIT 1) > (SELECT id FROM unnest($1::uuid[]) AS id ORDER BY id DESC LIMIT 1) AS later`, [
      first.map((s) => s.job.id),
      second.map((s) => s.job.id),
    ]);
    expect(rows[0].later).toBe(true);
    const perShard = new Array<number>(SHARDS).fill(0);
    for (const s of [...first, ...second]) perShard[s.job.shard]++;
    for (const n of perShard) expect(n).toBeGreaterThan(2_000 / SHARDS / 2);
  });

  it('recurring jobs and workflow runs: v7 of the moment they were made', async () => {
    const recurring = new RecurringService({ db: db.pool, shardCount: SHARDS, router: router(), wallNow: Date.now, forgetRun: () => undefined });
    const workflows = new WorkflowService({ db: db.pool, shardCount: SHARDS, router: router(), forgetRun: () => undefined });
    const before = Date.now();
    const jobs = await recurring.schedule([{ ...scheduleInput(0, { queue: 'ids' }), recurrence: intervalRecurrence(3_600_000) }]);
    const step: StepSpec = { name: 'a', queue: 'ids', payload: Buffer.from('a'), priority: 0, delivery: 'at_least_once', maxAttempts: 1, initialBackoffMs: 10, maxBackoffMs: 10, leaseMs: 30_000, after: [], trigger: 'all_success' };
    const run = await workflows.start({ namespace: 'default', definition: { inline: { name: 'ids', maxInFlight: 0, steps: orderSteps('s', [step]) } }, startAtMs: Date.now(), maxInFlight: 0 });
    const after = Date.now();
    expectTimeOrdered([jobs[0].job.id, run.id], before, after);
  });

  it("workflow steps' jobs, made by Postgres (UUID_V7): v7 of the statement's moment", async () => {
    // Postgres's own clock: the database may be on another machine.
    const pgNow = async (): Promise<number> => Number((await db.pool.query<{ ms: string }>(`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::int8 AS ms`)).rows[0].ms);
    const before = await pgNow();
    const { rows } = await db.pool.query<{ id: string }>(`SELECT (${UUID_V7})::text AS id FROM generate_series(1, 5000)`);
    const after = await pgNow();
    expectTimeOrdered(rows.map((r) => r.id), before, after);
    const workflows = new WorkflowService({ db: db.pool, shardCount: SHARDS, router: router(), forgetRun: () => undefined });
    const steps: StepSpec[] = ['a', 'b'].map((name) => ({ name, queue: 'ids', payload: Buffer.from(name), priority: 0, delivery: 'at_least_once', maxAttempts: 1, initialBackoffMs: 10, maxBackoffMs: 10, leaseMs: 30_000, after: [], trigger: 'all_success' }));
    const started = await pgNow();
    const run = await workflows.start({ namespace: 'default', definition: { inline: { name: 'ids2', maxInFlight: 0, steps: orderSteps('s', steps) } }, startAtMs: Date.now(), maxInFlight: 0 });
    const done = await pgNow();
    const jobs = await db.pool.query<{ job_id: string }>('SELECT job_id::text FROM workflow_steps WHERE workflow_run_id = $1', [run.id]);
    expect(jobs.rows).toHaveLength(2);
    expectTimeOrdered(jobs.rows.map((r) => r.job_id), started, done);
  });
});
