/**
 * The engine's claim and answer connections are opened and primed at start
 * (each statement planned once per connection), and the pool keeps them:
 * the first claims of a burst do not pay a new backend's catalog loads.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createPool, primeConnections, type Db } from '../../daemon/db/pool.js';
import { CLAIM_RUNS } from '../../daemon/db/queries/dispatch.js';

let db: TestDatabase | undefined;
let pool: Db | undefined;
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function backends(name: string): Promise<{ query: string }[]> {
  const c = new pg.Client({ connectionString: db!.url });
  await c.connect();
  try {
    const r = await c.query<{ query: string }>(`SELECT query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name = $2`, [
      db!.name,
      name,
    ]);
    return r.rows;
  } finally {
    await c.end();
  }
}

describe('primeConnections', () => {
  it('opens every connection of the pool, plans the statement on each, and the pool keeps them open', async () => {
    db = await createTestDatabase(1);
    const url = new URL(db.url);
    url.searchParams.set('application_name', 'tl_prime_test');
    pool = createPool({ ...db.opts, url: url.toString(), poolSize: 3, keepOpen: true });
    expect(pool.totalCount).toBe(0);

    await primeConnections(pool, [{ text: CLAIM_RUNS, values: [[], [], [], 0, 0, '{}'] }]);

    expect(pool.totalCount).toBe(3);
    expect(pool.idleCount).toBe(3);
    // keepOpen: the pool never closes these for being idle.
    expect(pool.options.min).toBe(3);
    const seen = await backends('tl_prime_test');
    expect(seen).toHaveLength(3);
    for (const b of seen) expect(b.query).toBe('ROLLBACK');
  });

  it('a statement that cannot be planned rejects naming the problem, and drops the connections it failed on', async () => {
    const own = createPool({ ...db!.opts, poolSize: 2, keepOpen: true });
    try {
      await expect(primeConnections(own, [{ text: 'SELECT * FROM no_such_table', values: [] }])).rejects.toThrow(/no_such_table/);
      expect(own.waitingCount).toBe(0);
      // Released with their error: the pool did not keep them.
      expect(own.totalCount).toBe(0);
      // And the pool still serves.
      expect((await own.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await own.end();
    }
  });
});
