/**
 * Workflow step transitions against real rows, without a daemon: runs are
 * claimed with the engine's own CLAIM_RUNS and answered through Answers, so
 * the races are made on purpose:
 *
 * - the two parents of a join complete in two transactions at once (two
 *   Answers, two batchers): the join is made exactly once;
 * - the same delivery completed twice at once (a redelivered Complete): one
 *   wins, the other is refused, the children are made once;
 * - a transition of a started step repeated (the repair pass racing an
 *   answer): no second job for the same generation;
 * - a final Fail cascades upstream_failed and finishes the run;
 * - the claim hands the parents' outputs to the child;
 * - a router that may fire (it holds the shards' fences) gets the children
 *   fired by the completing transaction itself, under its fence and only
 *   under a fence Postgres agrees with;
 * - trigger rules: a cleanup step (all_done) runs once every parent ended,
 *   counting a failed parent and the all_success steps that failure made
 *   upstream_failed, while those never run; its own failure is what its
 *   children see; a partial re-run runs it again after its re-run parents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Answers } from '../../daemon/dispatch/answers.js';
import { RunRouter } from '../../daemon/engine/router.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { START_READY_STEPS } from '../../daemon/db/queries/workflows.js';
import { TimelaneError } from '../../daemon/errors.js';
import { orderSteps, type StepSpec } from '../../daemon/workflows/definition.js';
import { WorkflowService } from '../../daemon/workflows/workflow-service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { claimDirect } from '../helpers/daemon-parts.js';

const SHARDS = 2;
let db: TestDatabase;
let workflows: WorkflowService;
let answersA: Answers;
let answersB: Answers;

const router = (): RunRouter => new RunRouter({ schema: 'timelane', windowMs: 30_000, wallNow: Date.now, owns: () => true, offerLocal: () => undefined, cancelLocal: () => undefined });

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  for (let s = 0; s < SHARDS; s++) await db.pool.query(`UPDATE shards SET fence = 1, owner = 'tester' WHERE shard = $1`, [s]);
  workflows = new WorkflowService({ db: db.pool, shardCount: SHARDS, router: router(), forgetRun: () => undefined });
  answersA = new Answers(db.pool, router());
  answersB = new Answers(db.pool, router());
});
afterAll(async () => {
  await db?.drop();
});

function step(name: string, after: string[] = [], maxAttempts = 1, delivery: StepSpec['delivery'] = 'at_least_once', trigger: StepSpec['trigger'] = 'all_success'): StepSpec {
  return { name, queue: 'wf-int', payload: Buffer.from(name), priority: 0, delivery, maxAttempts, initialBackoffMs: 10, maxBackoffMs: 10, leaseMs: 30_000, after, trigger };
}

/** A cleanup step: runs once every parent ended, whatever the outcome. */
const cleanup = (name: string, after: string[]): StepSpec => step(name, after, 1, 'at_least_once', 'all_done');

/** A router that fires new step runs under these fences (one per shard), collecting what it is handed after commit. */
function firingRouter(fence: number, delivered: FiredRunRow[]): RunRouter {
  return new RunRouter({
    schema: 'timelane',
    windowMs: 30_000,
    wallNow: Date.now,
    owns: () => true,
    offerLocal: () => undefined,
    cancelLocal: () => undefined,
    firing: { fences: () => ({ shards: [0, 1], fences: [fence, fence] }), deliver: (r) => delivered.push(r) },
  });
}

async function start(steps: StepSpec[]): Promise<string> {
  const run = await workflows.start({ namespace: 'default', definition: { inline: { name: 'int', maxInFlight: 0, steps: orderSteps('s', steps) } }, startAtMs: Date.now(), maxInFlight: 0 });
  return run.id;
}

/** Claims every scheduled run of the workflow run's steps (as the owner's fast lane would). */
async function fire(workflowRunId: string): Promise<Map<string, FiredRunRow>> {
  const { rows } = await db.pool.query<{ id: number; shard: number }>(
    `SELECT r.id, r.shard FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.workflow_run_id = $1 AND r.status = 'scheduled'`,
    [workflowRunId],
  );
  const out = new Map<string, FiredRunRow>();
  for (const r of rows) for (const f of await claimDirect(db.pool, [r.id], r.shard, 1)) out.set(f.workflow_step as string, f);
  return out;
}

const delivery = (r: FiredRunRow, output: string | null = null) => ({ runId: r.id, shard: r.shard, fence: r.fence, deliveries: r.deliveries, sentAtMs: null, output: output === null ? null : Buffer.from(output) });

async function states(workflowRunId: string): Promise<Record<string, string>> {
  const { steps } = await workflows.get(workflowRunId);
  return Object.fromEntries(steps.map((s) => [s.step, s.state]));
}

async function jobsPerStep(workflowRunId: string): Promise<Record<string, number>> {
  const { rows } = await db.pool.query<{ step: string; n: string }>(`SELECT workflow_step AS step, count(*) AS n FROM jobs WHERE workflow_run_id = $1 GROUP BY 1`, [workflowRunId]);
  return Object.fromEntries(rows.map((r) => [r.step, Number(r.n)]));
}

describe('workflow transitions', () => {
  it('makes a join once when its parents complete in two transactions at once, with both outputs', async () => {
    const id = await start([step('a'), step('b', ['a']), step('c', ['a']), step('d', ['b', 'c'])]);
    const first = await fire(id);
    expect([...first.keys()]).toEqual(['a']);
    expect(await answersA.complete([delivery(first.get('a') as FiredRunRow, 'A')])).toEqual([null]);
    const mid = await fire(id);
    expect([...mid.keys()].sort()).toEqual(['b', 'c']);
    expect(mid.get('b')?.parent_steps).toEqual(['a']);
    expect(mid.get('b')?.parent_outputs?.map(String)).toEqual(['A']);
    const [rb, rc] = await Promise.all([
      answersA.complete([delivery(mid.get('b') as FiredRunRow, 'B')]),
      answersB.complete([delivery(mid.get('c') as FiredRunRow, 'C')]),
    ]);
    expect([rb, rc]).toEqual([[null], [null]]);
    const last = await fire(id);
    expect([...last.keys()]).toEqual(['d']);
    expect(last.get('d')?.parent_steps).toEqual(['b', 'c']);
    expect(last.get('d')?.parent_outputs?.map(String)).toEqual(['B', 'C']);
    expect(await jobsPerStep(id)).toEqual({ a: 1, b: 1, c: 1, d: 1 });
    await answersA.complete([delivery(last.get('d') as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('succeeded');
  });

  it('a Complete delivered twice at once: one wins, the other is refused, children made once', async () => {
    const id = await start([step('p'), step('q', ['p'])]);
    const p = (await fire(id)).get('p') as FiredRunRow;
    const [x, y] = await Promise.all([answersA.complete([delivery(p)]), answersB.complete([delivery(p)])]);
    const errs = [...x, ...y].filter((e) => e !== null);
    expect(errs).toHaveLength(1);
    expect((errs[0] as TimelaneError).kind).toBe('failed_precondition');
    expect(await jobsPerStep(id)).toEqual({ p: 1, q: 1 });
  });

  it('starting a started step again makes no second job (the repair racing an answer)', async () => {
    const id = await start([step('only')]);
    const again = await db.pool.query(START_READY_STEPS, [[id], [], [], null]);
    expect(again.rowCount).toBe(0);
    // Even with the step forced back to ready for the same generation, the unique key refuses a second job.
    await db.pool.query(`UPDATE workflow_steps SET state = 'ready', generation = generation - 1 WHERE workflow_run_id = $1`, [id]);
    const forced = await db.pool.query(START_READY_STEPS, [[id], [], [], null]);
    expect(forced.rowCount).toBe(0);
    expect(await jobsPerStep(id)).toEqual({ only: 1 });
  });

  it('a final Fail fails the step, cascades upstream_failed, and finishes the run once nothing can run', async () => {
    const id = await start([step('root'), step('bad', ['root']), step('down', ['bad']), step('side', ['root'])]);
    await answersA.complete([delivery((await fire(id)).get('root') as FiredRunRow)]);
    const mid = await fire(id);
    const out = await answersA.fail(delivery(mid.get('bad') as FiredRunRow), true, 'boom'); // maxAttempts 1: dead
    expect(out.status).toBe('dead');
    expect(await states(id)).toEqual({ root: 'succeeded', bad: 'failed', down: 'upstream_failed', side: 'running' });
    expect((await workflows.getRun(id)).state).toBe('running'); // side still runs
    await answersB.complete([delivery(mid.get('side') as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('failed');
    expect(await jobsPerStep(id)).toEqual({ root: 1, bad: 1, side: 1 });
    // Partial re-run: only the failed step and its downstream get new jobs.
    const { reset } = await workflows.retry(id, []);
    expect(reset.sort()).toEqual(['bad', 'down']);
    const again = await fire(id);
    expect([...again.keys()]).toEqual(['bad']);
    await answersA.complete([delivery(again.get('bad') as FiredRunRow)]);
    await answersA.complete([delivery((await fire(id)).get('down') as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('succeeded');
    expect(await jobsPerStep(id)).toEqual({ root: 1, bad: 2, down: 1, side: 1 });
  });

  it('fires the children in the completing transaction under the fence it holds, with their parents\' outputs', async () => {
    const delivered: FiredRunRow[] = [];
    const firing = new Answers(db.pool, firingRouter(1, delivered));
    const id = await start([step('a'), step('b', ['a']), step('c', ['a'], 1, 'at_most_once')]);
    await firing.complete([delivery((await fire(id)).get('a') as FiredRunRow, 'A')]);
    // b: fired by the Complete's transaction, handed over after commit, with everything a worker receives.
    expect(delivered.map((r) => r.workflow_step)).toEqual(['b']);
    const b = delivered[0];
    expect(b).toMatchObject({ status: 'fired', fence: 1, deliveries: 1, workflow_run_id: id, parent_steps: ['a'] });
    expect(b.payload.toString()).toBe('b');
    expect(b.parent_outputs?.map(String)).toEqual(['A']);
    expect(b.lease_expires_at_ms).toBeGreaterThan(Date.now());
    const { rows } = await db.pool.query<{ status: string; fence: number; deliveries: number }>(`SELECT status, fence, deliveries FROM runs WHERE id = $1`, [b.id]);
    expect(rows[0]).toEqual({ status: 'fired', fence: 1, deliveries: 1 });
    // c is delivered at most once: that needs the claim's record, so it is only scheduled (the fast lane claims it).
    const rest = await fire(id);
    expect([...rest.keys()]).toEqual(['c']);
    expect(await firing.complete([delivery(b)])).toEqual([null]);
    await firing.complete([delivery(rest.get('c') as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('succeeded');
    expect(await jobsPerStep(id)).toEqual({ a: 1, b: 1, c: 1 });
  });

  it('fires nothing under a fence Postgres does not agree with: the children are only scheduled', async () => {
    const delivered: FiredRunRow[] = [];
    const stale = new Answers(db.pool, firingRouter(0, delivered)); // Postgres holds fence 1
    const id = await start([step('a'), step('b', ['a'])]);
    await stale.complete([delivery((await fire(id)).get('a') as FiredRunRow)]);
    expect(delivered).toEqual([]);
    const next = await fire(id);
    expect([...next.keys()]).toEqual(['b']);
    expect(next.get('b')?.deliveries).toBe(1);
  });

  it('runs a cleanup step (all_done) once every parent ended, whatever the outcome; all_success steps downstream of the failure never run', async () => {
    const id = await start([
      step('a'),
      step('bad', ['a']),
      step('x', ['bad']),
      step('y', ['x']),
      step('side', ['a']),
      cleanup('cleanup', ['bad', 'y', 'side']),
      step('post', ['cleanup']),
    ]);
    await answersA.complete([delivery((await fire(id)).get('a') as FiredRunRow, 'A')]);
    const mid = await fire(id);
    expect([...mid.keys()].sort()).toEqual(['bad', 'side']);
    expect((await answersA.fail(delivery(mid.get('bad') as FiredRunRow), false, 'boom')).status).toBe('dead');
    // x and y can never run; cleanup counts bad and y as through and still waits for side.
    expect(await states(id)).toMatchObject({ bad: 'failed', x: 'upstream_failed', y: 'upstream_failed', side: 'running', cleanup: 'pending', post: 'pending' });
    expect((await workflows.get(id)).steps.find((s) => s.step === 'cleanup')).toMatchObject({ trigger: 'all_done', waiting: 1 });
    expect(await fire(id)).toEqual(new Map());
    await answersA.complete([delivery(mid.get('side') as FiredRunRow, 'S')]);
    const c = (await fire(id)).get('cleanup') as FiredRunRow;
    expect(c.parent_steps).toEqual(['bad', 'side', 'y']);
    expect(c.parent_outputs?.map(String)).toEqual(['', 'S', '']);
    await answersA.complete([delivery(c, 'C')]);
    await answersA.complete([delivery((await fire(id)).get('post') as FiredRunRow)]);
    expect(await states(id)).toEqual({ a: 'succeeded', bad: 'failed', x: 'upstream_failed', y: 'upstream_failed', side: 'succeeded', cleanup: 'succeeded', post: 'succeeded' });
    // Something failed: the run failed, though its cleanup (and what followed it) succeeded.
    expect((await workflows.getRun(id)).state).toBe('failed');
    expect(await jobsPerStep(id)).toEqual({ a: 1, bad: 1, side: 1, cleanup: 1, post: 1 });

    // A partial re-run: the failed step, what it doomed, and the cleanup after them run again; side does not.
    const { reset } = await workflows.retry(id, []);
    expect(reset.sort()).toEqual(['bad', 'cleanup', 'post', 'x', 'y']);
    for (const name of ['bad', 'x', 'y', 'cleanup', 'post']) await answersA.complete([delivery((await fire(id)).get(name) as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('succeeded');
    expect(await jobsPerStep(id)).toEqual({ a: 1, bad: 2, x: 1, y: 1, side: 1, cleanup: 2, post: 2 });
  });

  it('a cleanup step runs after a cancelled parent, and when it fails its own children are upstream_failed', async () => {
    const id = await start([step('a'), cleanup('cleanup', ['a']), step('after', ['cleanup']), cleanup('last', ['after'])]);
    const a = (await fire(id)).get('a') as FiredRunRow;
    // The step's job is cancelled (CancelJob): its worker's Fail ends it cancelled.
    await db.pool.query(`UPDATE runs SET cancel_requested_at = now() WHERE id = $1`, [a.id]);
    expect((await answersA.fail(delivery(a), true, 'stopped')).status).toBe('cancelled');
    expect(await states(id)).toMatchObject({ a: 'cancelled', cleanup: 'running' });
    expect((await answersA.fail(delivery((await fire(id)).get('cleanup') as FiredRunRow), false, 'cleanup broke')).status).toBe('dead');
    // after (all_success) never runs; last (all_done) counts it as through and runs.
    expect(await states(id)).toEqual({ a: 'cancelled', cleanup: 'failed', after: 'upstream_failed', last: 'running' });
    await answersA.complete([delivery((await fire(id)).get('last') as FiredRunRow)]);
    expect((await workflows.getRun(id)).state).toBe('failed');
  });
});
