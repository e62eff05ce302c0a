/**
 * The fire path's batch statements cost their batch, whatever Postgres's
 * statistics say. Each case builds the state that once made the planner go
 * wrong, then runs the statement under EXPLAIN ANALYZE (rolled back) and
 * counts the `runs` rows its scans visited:
 *
 * - answers (Complete, hand-off times, a closed stream's deliveries) with
 *   stale statistics: ANALYZE saw every run scheduled, then 20,000 fired.
 *   Joined plainly to the batch, Postgres estimated one fired run, scanned
 *   all of them and compared each with every delivery (2,000 × 20,000);
 * - the claim on 64 held shards: the fence joined as a row source drove a
 *   nested loop that read the claimed runs once per shard;
 * - the materialiser's due jobs: a bitmap scan over every shard never marks
 *   dead index entries, so every batch re-read every dead job version;
 * - the claim's held-back lookup (its queue had no room in delivery) for a
 *   queue ANALYZE never saw: planned as a filter on `id = ANY(…)`, it walked
 *   runs_queue_status through every scheduled run of the queue, per claim
 *   (53 ms for 200,000 runs in a 5,000/s burst, and the claims queued behind it);
 * - on the same path, the overlap check of missed occurrences (every
 *   scheduled occurrence through runs_job_live) and the status of missed
 *   runs (every scheduled run of the shards through runs_due), when the
 *   statistics had not seen those runs scheduled.
 *
 * Autovacuum is off for this file's tables: statistics stay as the test left them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { withClient } from '../../daemon/db/pool.js';
import { CLAIM_RUNS, COMPLETE_LOCKED, COMPLETE_RUNS, EXPIRE_DELIVERIES, HAND_OFFS_LOCKED, HELD_BACK, RECORD_HAND_OFFS } from '../../daemon/db/queries/dispatch.js';
import { OVERLAP_BLOCKED, SELECT_DUE_RECURRING } from '../../daemon/db/queries/recurring.js';
import { SCHEDULED_STATUS } from '../../daemon/db/queries/window.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const SHARDS = 64;
const FIRED = 20_000;
const BATCH = 2_000;
const ALL_SHARDS = Array.from({ length: SHARDS }, (_, s) => s);
const FENCES = ALL_SHARDS.map(() => 1);

let db: TestDatabase;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** The plan's nodes that are not inside a SubPlan (a correlated subquery run per row). */
function outsideSubPlans(plan: PlanNode[]): PlanNode[] {
  const inside = new Set<PlanNode>();
  for (const n of plan) if (n['Parent Relationship'] === 'SubPlan') nodes(n).forEach((m) => inside.add(m));
  return plan.filter((n) => !inside.has(n));
}

/** EXPLAIN ANALYZE in a transaction that is rolled back; the plan's nodes. */
async function analyze(sql: string, params: unknown[]): Promise<PlanNode[]> {
  return withClient(db.pool, async (c: pg.PoolClient) => {
    await c.query('BEGIN');
    try {
      const { rows } = await c.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      return nodes(rows[0]['QUERY PLAN'][0].Plan);
    } finally {
      await c.query('ROLLBACK');
    }
  });
}

/** Rows the plan's scans of `table` visited (rows × loops), and how those scans were made. */
function visited(plan: PlanNode[], table: string): { rows: number; scans: string[] } {
  const scans = plan.filter((n) => n['Relation Name'] === table && n['Node Type'] !== 'ModifyTable');
  return {
    rows: scans.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0),
    scans: scans.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`),
  };
}

/** The plan's scans of `runs` that ran, how, and the rows they read, kept or filtered out (× loops). */
function readsOfRuns(plan: PlanNode[]): { read: number; scans: PlanNode[]; how: string[] } {
  const scans = plan.filter((n) => n['Relation Name'] === 'runs' && n['Node Type'] !== 'ModifyTable' && n['Actual Loops'] > 0);
  return {
    read: scans.reduce((sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'], 0),
    scans,
    how: scans.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`),
  };
}

/** `jobs` one-shot jobs on `queue` over every shard, 40 scheduled runs each, due a second ago. */
async function scheduledOneShots(queue: string, jobs: number): Promise<void> {
  await db.pool.query(
    `INSERT INTO jobs (id, namespace, queue, shard, payload, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms, status)
     SELECT gen_random_uuid(), 'default', $1, g % ${SHARDS}, '\\x', 'at_least_once', 3, 1000, 60000, 30000, 'active'
     FROM generate_series(1, $2::int) g`,
    [queue, jobs],
  );
  await db.pool.query(
    `INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key)
     SELECT j.id, j.shard, j.queue, 0, 1, 'scheduled', now() - interval '1 second', j.id || ':' || k
     FROM jobs j, generate_series(1, 40) k WHERE j.queue = $1`,
    [queue],
  );
}

/** The rows a statement changed in `table` (what its ModifyTable node was fed). */
function written(plan: PlanNode[], table: string): number {
  return plan
    .filter((n) => n['Node Type'] === 'ModifyTable' && n['Relation Name'] === table)
    .map((n) => n.Plans?.find((c) => c['Parent Relationship'] === 'Outer'))
    .reduce((s, c) => s + (c ? c['Actual Rows'] * c['Actual Loops'] : 0), 0);
}

/** Every row every node of the plan produced, loops included: what the statement worked through. */
function work(plan: PlanNode[]): number {
  return plan.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  await db.pool.query(`ALTER TABLE runs SET (autovacuum_enabled = false); ALTER TABLE jobs SET (autovacuum_enabled = false)`);
  await db.pool.query('UPDATE shards SET fence = 1');
  // 1,000 one-shot jobs with 40 runs each, over every shard; all scheduled when ANALYZE looks.
  await scheduledOneShots('plans', 1000);
  await db.pool.query('ANALYZE runs; ANALYZE jobs');
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('batch statements cost their batch', () => {
  it('a claim of 2,000 runs on 64 held shards reads each run twice: a lookup and a write, by primary key', async () => {
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM runs WHERE status = 'scheduled' ORDER BY random() LIMIT ${BATCH}`);
    const plan = await analyze(CLAIM_RUNS, [rows.map((r) => r.id), ALL_SHARDS, FENCES, Date.now(), 0, '{}']);
    expect(written(plan, 'runs')).toBe(BATCH);
    // Two visits per claimed run (a nested loop on the fence read them 64 times: 128,000): the
    // lookup by id, and the write by the tuple id it found (or by id). The overlap check is never
    // run for one-shot runs.
    const v = visited(plan, 'runs');
    expect(v.rows, v.scans.join(', ')).toBeLessThanOrEqual(2 * BATCH);
    const run = plan.filter((n) => n['Relation Name'] === 'runs' && n['Node Type'] !== 'ModifyTable' && n['Actual Loops'] > 0);
    const how = run.map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
    expect(how.every((s) => s === 'Index Scan runs_pkey' || s === 'Tid Scan'), how.join(', ')).toBe(true);
  });

  describe('answers with statistics that saw no fired run', () => {
    let batch: { id: string; shard: number }[];

    beforeAll(async () => {
      // Fire 20,000 runs after ANALYZE: the planner still believes there are none.
      await db.pool.query(`
        UPDATE runs SET status = 'fired', fence = 1, deliveries = 1, claimed_at = now(), lease_expires_at = now() + interval '30 seconds'
        WHERE id IN (SELECT id FROM runs WHERE status = 'scheduled' ORDER BY id LIMIT ${FIRED})`);
      const { rows } = await db.pool.query<{ id: string; shard: number }>(
        `SELECT id, shard FROM runs WHERE status = 'fired' ORDER BY random() LIMIT ${BATCH}`,
      );
      batch = rows;
    });

    const deliveries = (): unknown[] => [
      batch.map((r) => r.id),
      batch.map(() => 1),
      batch.map(() => 1),
      batch.map((r) => r.shard),
      batch.map(() => Date.now()),
    ];

    it.each([
      ['COMPLETE_RUNS', COMPLETE_RUNS],
      ['RECORD_HAND_OFFS', RECORD_HAND_OFFS],
      ['EXPIRE_DELIVERIES', EXPIRE_DELIVERIES],
    ])('%s of 2,000 deliveries works through each once, not through every fired run for each', async (_name, sql) => {
      const plan = await analyze(sql, deliveries());
      expect(written(plan, 'runs')).toBe(BATCH);
      // A lookup and a write per delivery, through the primary key. The plan this replaced compared
      // every fired run with every delivery (20,000 × 2,000 = 40,000,000 rows); a hash of the batch
      // against a sequential scan of runs (a pass over the table per batch) was the other.
      const v = visited(plan, 'runs');
      expect(work(plan), v.scans.join(', ')).toBeLessThanOrEqual(20 * BATCH);
      expect(v.rows, v.scans.join(', ')).toBeLessThanOrEqual(2 * BATCH);
      expect(v.scans.every((s) => s === 'Index Scan runs_pkey'), v.scans.join(', ')).toBe(true);
    });

    it.each([
      ['COMPLETE_LOCKED', COMPLETE_LOCKED],
      ['HAND_OFFS_LOCKED', HAND_OFFS_LOCKED],
    ])('%s of 2,000 deliveries reads each run once, by primary key', async (_name, sql) => {
      const plan = await analyze(sql, deliveries());
      const v = visited(plan, 'runs');
      expect(v.rows, v.scans.join(', ')).toBeLessThanOrEqual(BATCH);
      expect(v.scans.every((s) => s === 'Index Scan runs_pkey'), v.scans.join(', ')).toBe(true);
    });
  });

  it("the materialiser's due jobs are read per shard in index order, a quota each", async () => {
    await db.pool.query(`
      INSERT INTO jobs (id, namespace, queue, shard, payload, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms,
                        status, kind, recurrence, next_fire_at)
      SELECT gen_random_uuid(), 'default', 'plans', g % ${SHARDS}, '\\x', 'at_least_once', 3, 1000, 60000, 30000, 'active', 'interval',
             '{"cadence":{"kind":"interval","everyMs":60000,"phaseMs":0}}'::jsonb, now() + (g % 30) * interval '1 second'
      FROM generate_series(1, 20000) g`);
    await db.pool.query('ANALYZE jobs');
    const perShard = 8;
    const plan = await analyze(SELECT_DUE_RECURRING, [perShard, ALL_SHARDS, FENCES, Date.now() + 60_000]);
    const v = visited(plan, 'jobs');
    expect(plan[0]['Actual Rows']).toBe(perShard * SHARDS);
    expect(v.scans.every((s) => s === 'Index Scan jobs_next_fire'), v.scans.join(', ')).toBe(true);
    expect(v.rows).toBe(perShard * SHARDS);
  });

  it("the claim's held-back lookup reads its batch one lookup a run, even for a queue ANALYZE never saw", async () => {
    // A new queue's burst after the last ANALYZE: 20,000 scheduled runs the statistics know nothing of.
    await scheduledOneShots('burst', 500);
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM runs WHERE queue = 'burst' ORDER BY random() LIMIT ${BATCH}`);
    // The claim's own parameters, its queue held back (full in delivery).
    const plan = await analyze(HELD_BACK, [rows.map((r) => r.id), ALL_SHARDS, FENCES, Date.now(), 0, '{burst}']);
    expect(plan[0]['Actual Rows']).toBe(BATCH);
    // The plan this replaced read all 20,000 of the queue's scheduled runs through runs_queue_status
    // and filtered out all but the batch.
    const { read, scans, how } = readsOfRuns(plan);
    expect(read, how.join(', ')).toBeLessThanOrEqual(BATCH);
    // One index lookup per run (by id: runs_pkey, or runs_queue_status, whose key ends with the id).
    expect(how.every((s) => s === 'Index Scan runs_pkey' || s === 'Index Scan runs_queue_status'), how.join(', ')).toBe(true);
    expect(scans.every((n) => n['Actual Loops'] === BATCH), how.join(', ')).toBe(true);
  });

  it("the overlap check of missed occurrences reads its batch one lookup a run, whatever the recurring runs around it", async () => {
    // 20,000 occurrences of recurring jobs (overlap skip) made after the last ANALYZE, all overdue:
    // each but a job's oldest is held back by an older one not started yet.
    await db.pool.query(`
      INSERT INTO jobs (id, namespace, queue, shard, payload, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms,
                        status, kind, recurrence, overlap)
      SELECT gen_random_uuid(), 'default', 'occurrences', g % ${SHARDS}, '\\x', 'at_least_once', 3, 1000, 60000, 30000, 'active', 'interval',
             '{"cadence":{"kind":"interval","everyMs":60000,"phaseMs":0}}'::jsonb, 'skip'
      FROM generate_series(1, 500) g`);
    await db.pool.query(`
      INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, nominal_at, origin, idempotency_key)
      SELECT j.id, j.shard, j.queue, 0, 1, 'scheduled', now() - k * interval '1 minute', now() - k * interval '1 minute', 'schedule', j.id || ':' || k
      FROM jobs j, generate_series(1, 40) k WHERE j.queue = 'occurrences'`);
    const { rows } = await db.pool.query<{ id: string; held: boolean }>(`
      SELECT r.id, EXISTS (SELECT 1 FROM runs o WHERE o.job_id = r.job_id AND o.nominal_at < r.nominal_at) AS held
      FROM runs r WHERE r.queue = 'occurrences' ORDER BY random() LIMIT ${BATCH}`);
    const held = rows.filter((r) => r.held).length;
    expect(held).toBeGreaterThan(BATCH / 2);
    const plan = await analyze(OVERLAP_BLOCKED, [rows.map((r) => r.id), ALL_SHARDS, FENCES]);
    expect(written(plan, 'runs')).toBe(held);
    // How the batch is found and written, the overlap check aside (it reads each candidate's own job's
    // runs: that is the check). The plan this replaced read all 20,000 scheduled occurrences through
    // runs_job_live, once.
    const { read, scans, how } = readsOfRuns(outsideSubPlans(plan));
    const lookups = scans.filter((n) => n['Actual Loops'] === BATCH);
    expect(lookups.map((n) => n['Index Name']), how.join(', ')).toEqual(['runs_pkey']);
    // The write: by tuple id (or id), once per run held back.
    const writes = scans.filter((n) => !lookups.includes(n));
    expect(writes.length, how.join(', ')).toBeGreaterThan(0);
    expect(writes.every((n) => (n['Node Type'] === 'Tid Scan' || n['Index Name'] === 'runs_pkey') && n['Actual Loops'] === held), how.join(', ')).toBe(true);
    expect(read, how.join(', ')).toBeLessThanOrEqual(BATCH + held);
  });

  describe('with statistics that saw almost no scheduled run', () => {
    beforeAll(async () => {
      // ANALYZE while the scheduled runs are parked as completed, then put them back.
      await db.pool.query(`CREATE TABLE parked AS SELECT id FROM runs WHERE status = 'scheduled'`);
      await db.pool.query(`UPDATE runs SET status = 'completed' WHERE id IN (SELECT id FROM parked)`);
      await db.pool.query('ANALYZE runs');
      await db.pool.query(`UPDATE runs SET status = 'scheduled' WHERE id IN (SELECT id FROM parked)`);
    });

    it('the status of missed runs (are they still scheduled?) is read one lookup a run', async () => {
      const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM parked ORDER BY random() LIMIT ${BATCH}`);
      const plan = await analyze(SCHEDULED_STATUS, [rows.map((r) => r.id), ALL_SHARDS]);
      expect(plan[0]['Actual Rows']).toBe(BATCH);
      // The plan this replaced read every scheduled run of the shards through runs_due.
      const { read, how } = readsOfRuns(plan);
      expect(read, how.join(', ')).toBeLessThanOrEqual(BATCH);
    });
  });
});
