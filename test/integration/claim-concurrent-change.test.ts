/**
 * The claim looks its runs up in the statement's snapshot, locks them FOR
 * UPDATE SKIP LOCKED and then writes them (CLAIM_RUNS). A run another
 * transaction is changing must be left alone, and the claim must not wait
 * for it: a cancel stays a cancel, a run rescheduled later does not fire now,
 * and two claims racing over one run fire it once. (Before SKIP LOCKED the
 * claim waited for the run's row, and every run claimed with it waited too:
 * test/fault/locked-run.test.ts.) Checked with both plans Postgres may cache
 * for the write (by primary key, or by tuple id: a Tid Scan, whose re-check
 * of a newer version passed anything until a 2025 fix of Postgres; the
 * claim's xmin test is what catches a change there).
 * Scenario written with a review helper (helper-30).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { clientConfig } from '../../daemon/db/pool.js';
import { CLAIM_RUNS } from '../../daemon/db/queries/dispatch.js';
import { CLAIM_RUNS_STATEMENT } from '../../daemon/dispatch/claimer.js';
import { fenceOf, insertRuns, runStates } from '../helpers/daemon-parts.js';

let db: TestDatabase;
const clients: pg.Client[] = [];
beforeAll(async () => {
  db = await createTestDatabase(4);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await db?.drop();
});

type WritePlan = 'by primary key' | 'by tuple id';

/** A session as the engine's claim pool opens it (keyedOnly); `tid` forces the write's Tid Scan. */
async function claimSession(plan: WritePlan): Promise<{ c: pg.Client; pid: number }> {
  const c = new pg.Client(clientConfig({ ...db.opts, keyedOnly: true }));
  await c.connect();
  clients.push(c);
  if (plan === 'by tuple id') await c.query('SET enable_indexscan = off; SET enable_bitmapscan = off');
  const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { c, pid: rows[0].pid };
}

async function plainSession(): Promise<pg.Client> {
  const c = new pg.Client(clientConfig(db.opts));
  await c.connect();
  clients.push(c);
  return c;
}

const claim = (c: pg.Client, runId: number, fence: number): Promise<pg.QueryResult> =>
  c.query({ name: CLAIM_RUNS_STATEMENT, text: CLAIM_RUNS, values: [[runId], [0], [fence], Date.now(), 0, '{}'] });

/** Resolves once the session `pid` waits for a lock. */
async function blockedOnLock(pid: number): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
      [pid],
    );
    if (rows[0].n === 1) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`session ${pid} never waited for a lock`);
}

async function writePlanOf(c: pg.Client): Promise<string> {
  const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${CLAIM_RUNS_STATEMENT}('{1}', '{0}', '{1}', 0, 0, '{}')`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe.each<WritePlan>(['by primary key', 'by tuple id'])('a claim whose write goes %s', (plan) => {
  it('uses that plan', async () => {
    const { c } = await claimSession(plan);
    await claim(c, -1, 0); // prepares it: force_generic_plan caches the generic plan at once
    const text = await writePlanOf(c);
    if (plan === 'by tuple id') expect(text).toMatch(/Tid Scan on runs r\b/);
    else expect(text).toMatch(/Index Scan using runs_pkey on runs r\b/);
  });

  for (const [what, change, status] of [
    ['cancelled', `UPDATE runs SET status = 'cancelled', finished_at = now() WHERE id = $1`, 'cancelled'],
    ['rescheduled an hour later', `UPDATE runs SET due_at = now() + interval '1 hour' WHERE id = $1`, 'scheduled'],
  ] as const) {
    it(`leaves alone a run being ${what}, without waiting for its row, and claims the others`, async () => {
      const [run, free] = await insertRuns(db.pool, 0, [Date.now() - 1_000, Date.now() - 1_000]);
      const fence = await fenceOf(db.pool, 0);
      const other = await plainSession();
      const { c } = await claimSession(plan);
      await claim(c, -1, fence);
      await other.query('BEGIN');
      await other.query(change, [run.id]);
      // Answered while the other transaction still holds the row: the locked run skipped, the free one claimed.
      const claimed = await c.query({ name: CLAIM_RUNS_STATEMENT, text: CLAIM_RUNS, values: [[run.id, free.id].sort((x, y) => x - y), [0], [fence], Date.now(), 0, '{}'] });
      expect(claimed.rows.map((r: { id: number }) => r.id)).toEqual([free.id]);
      await other.query('COMMIT');
      const after = (await runStates(db.pool, [run.id])).get(run.id)!;
      expect(after.status).toBe(status);
      expect(after.deliveries).toBe(0);
    });
  }

  // The claim takes its snapshot, then waits for its shard's row (held FOR NO KEY UPDATE here, as
  // an ownership bump holds it) while the change commits: the claim meets the run's newest version
  // when it locks it. A cancel or a move fails the claim's conditions there; a change that passes
  // them (a new priority) leaves a version the write's snapshot cannot see: a miss, and the next
  // claim fires the run once.
  for (const [what, change, status, nextClaim] of [
    ['cancelled', `UPDATE runs SET status = 'cancelled', finished_at = now() WHERE id = $1`, 'cancelled', 0],
    ['rescheduled an hour later', `UPDATE runs SET due_at = now() + interval '1 hour' WHERE id = $1`, 'scheduled', 0],
    ['given a new priority', `UPDATE runs SET priority = priority + 1 WHERE id = $1`, 'scheduled', 1],
  ] as const) {
    it(`leaves alone a run ${what} after the claim's snapshot, committed before the claim locks it`, async () => {
      const [run] = await insertRuns(db.pool, 0, [Date.now() - 1_000]);
      const fence = await fenceOf(db.pool, 0);
      const other = await plainSession();
      const shardHolder = await plainSession();
      const { c, pid } = await claimSession(plan);
      await claim(c, -1, fence);
      await shardHolder.query('BEGIN');
      await shardHolder.query('SELECT 1 FROM shards WHERE shard = 0 FOR NO KEY UPDATE');
      const claimed = claim(c, run.id, fence);
      await blockedOnLock(pid);
      await other.query(change, [run.id]);
      await shardHolder.query('COMMIT');
      expect((await claimed).rows).toHaveLength(0);
      const after = (await runStates(db.pool, [run.id])).get(run.id)!;
      expect(after.status).toBe(status);
      expect(after.deliveries).toBe(0);
      expect((await claim(c, run.id, fence)).rows).toHaveLength(nextClaim);
    });
  }

  it('two claims racing over one run with the same fence fire it once', async () => {
    const [run] = await insertRuns(db.pool, 0, [Date.now() - 1_000]);
    const fence = await fenceOf(db.pool, 0);
    const a = await claimSession(plan);
    const b = await claimSession(plan);
    await claim(a.c, -1, fence);
    await claim(b.c, -1, fence);
    await a.c.query('BEGIN');
    const first = await claim(a.c, run.id, fence);
    const second = await claim(b.c, run.id, fence); // answered while a's claim is not committed: it skips the run
    await a.c.query('COMMIT');
    expect([first.rows.length, second.rows.length]).toEqual([1, 0]);
    // And once a's claim committed, a third claim finds the run fired.
    expect((await claim(b.c, run.id, fence)).rows).toHaveLength(0);
    const after = (await runStates(db.pool, [run.id])).get(run.id)!;
    expect(after.status).toBe('fired');
    expect(after.deliveries).toBe(1);
  });
});
