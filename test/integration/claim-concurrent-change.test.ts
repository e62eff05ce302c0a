/**
 * The claim looks its runs up in the statement's snapshot and then writes
 * them (CLAIM_RUNS). A run changed after that snapshot, while the claim
 * waits for its row, must be left alone: a cancel stays a cancel, a run
 * rescheduled later does not fire now, and two claims racing over one run
 * fire it once. Checked with both plans Postgres may cache for the write (by
 * primary key, or by tuple id: a Tid Scan, whose re-check of a newer version
 * passed anything until a 2025 fix of Postgres; the claim's xmin test is
 * what catches the change there).
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

/** Resolves once the session `pid` waits for a lock (its claim is blocked on the run's row). */
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
    it(`leaves alone a run ${what} while it waits for the run's row`, async () => {
      const [run] = await insertRuns(db.pool, 0, [Date.now() - 1_000]);
      const fence = await fenceOf(db.pool, 0);
      const other = await plainSession();
      const { c, pid } = await claimSession(plan);
      await claim(c, -1, fence);
      await other.query('BEGIN');
      await other.query(change, [run.id]);
      const claimed = claim(c, run.id, fence);
      await blockedOnLock(pid);
      await other.query('COMMIT');
      expect((await claimed).rows).toHaveLength(0);
      const after = (await runStates(db.pool, [run.id])).get(run.id)!;
      expect(after.status).toBe(status);
      expect(after.deliveries).toBe(0);
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
    const second = claim(b.c, run.id, fence);
    await blockedOnLock(b.pid);
    await a.c.query('COMMIT');
    expect(first.rows.length + (await second).rows.length).toBe(1);
    const after = (await runStates(db.pool, [run.id])).get(run.id)!;
    expect(after.status).toBe('fired');
    expect(after.deliveries).toBe(1);
  });
});
