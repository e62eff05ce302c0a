/**
 * CLAIM_RUNS and COMPLETE_RUNS run as prepared statements on the engine's
 * claim and complete pools, so Postgres soon plans each once (a generic plan)
 * and reuses that plan. A generic plan made while `runs` is near empty (a
 * fresh install's first claims) could scan, and keep scanning as the table
 * grows. These pools are keyedOnly, and both statements reach `runs` through
 * LATERAL lookups by id: their generic plans are primary-key lookups, even
 * on an empty table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createPool, primeConnections, type Db } from '../../daemon/db/pool.js';
import { CLAIM_RUNS, COMPLETE_RUNS } from '../../daemon/db/queries/dispatch.js';
import { COMPLETE_RUNS_STATEMENT } from '../../daemon/dispatch/answers.js';
import { CLAIM_RUNS_STATEMENT } from '../../daemon/dispatch/claimer.js';

let db: TestDatabase;
const pools: Db[] = [];
beforeAll(async () => {
  db = await createTestDatabase(4); // nothing scheduled: `runs` and `jobs` are empty, the worst case for a plan
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db?.drop();
});

function pool(keyedOnly: boolean, poolSize = 1): Db {
  const p = createPool({ ...db.opts, poolSize, keyedOnly });
  pools.push(p);
  return p;
}

const STATEMENTS = {
  claim: { text: CLAIM_RUNS, types: 'int8[], int[], int8[], int8, int8, text[]', args: `'{1}', '{0}', '{1}', 0, 0, '{}'` },
  complete: { text: COMPLETE_RUNS, types: 'int8[], int8[], int[], int[], int8[]', args: `'{1}', '{1}', '{1}', '{0}', '{NULL}'` },
};

/** The generic plan Postgres would cache for a statement on a connection of `p`. */
async function genericPlan(p: Db, which: keyof typeof STATEMENTS): Promise<string> {
  const s = STATEMENTS[which];
  const c = await p.connect();
  try {
    await c.query('SET plan_cache_mode = force_generic_plan');
    await c.query(`PREPARE plan_probe(${s.types}) AS ${s.text}`);
    const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE plan_probe(${s.args})`);
    await c.query('DEALLOCATE plan_probe');
    await c.query('RESET plan_cache_mode');
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    c.release();
  }
}

/** Every node that reads `runs` or `jobs` in a plan: "<scan> on <table>". */
function readsOf(plan: string): string[] {
  return [...plan.matchAll(/(\w[\w ]*Scan)(?: using (\w+))? on (runs|jobs)\b/g)].map((m) => `${m[1]}${m[2] ? ` using ${m[2]}` : ''} on ${m[3]}`);
}

describe('the engine plans its claim and its complete for a table of any size', () => {
  it('claim, keyedOnly: on empty tables the generic plan reads runs and jobs by primary key only', async () => {
    const plan = await genericPlan(pool(true), 'claim');
    expect(plan).not.toMatch(/Hash Join|Merge Join/);
    const reads = readsOf(plan);
    // The lookup goes by id, the write by id or by the tuple id the lookup found; the overlap check
    // (recurring runs only) by job.
    expect(reads.filter((r) => r === 'Index Scan using runs_pkey on runs' || r === 'Tid Scan on runs')).toHaveLength(2);
    expect(reads).toContain('Index Scan using jobs_pkey on jobs');
    expect(reads.every((r) => ['Index Scan using runs_pkey on runs', 'Tid Scan on runs', 'Index Scan using jobs_pkey on jobs', 'Index Scan using runs_job on runs'].includes(r))).toBe(true);
  });

  it('complete, keyedOnly: on an empty runs table the generic plan reads runs by primary key only', async () => {
    const plan = await genericPlan(pool(true), 'complete');
    expect(plan).not.toMatch(/Hash Join|Merge Join/);
    const reads = readsOf(plan);
    expect(reads.filter((r) => r === 'Index Scan using runs_pkey on runs')).toHaveLength(2);
    expect(reads.every((r) => ['Index Scan using runs_pkey on runs', 'Index Scan using jobs_pkey on jobs'].includes(r))).toBe(true);
  });

  it('without keyedOnly the same generic plans scan (why the claim and complete pools are keyedOnly)', async () => {
    const p = pool(false);
    expect(readsOf(await genericPlan(p, 'claim'))).toContain('Seq Scan on jobs');
    expect(readsOf(await genericPlan(p, 'complete'))).toContain('Seq Scan on runs');
  });

  it('priming prepares the statement on every connection, and it survives the rolled-back transaction', async () => {
    const claims = pool(true, 2);
    const completes = pool(true, 2);
    await primeConnections(claims, [{ name: CLAIM_RUNS_STATEMENT, text: CLAIM_RUNS, values: [[], [], [], 0, 0, '{}'] }]);
    await primeConnections(completes, [{ name: COMPLETE_RUNS_STATEMENT, text: COMPLETE_RUNS, values: [[], [], [], [], []] }]);
    for (const [p, name, text, values] of [
      [claims, CLAIM_RUNS_STATEMENT, CLAIM_RUNS, [[], [], [], 0, 0, '{}']],
      [completes, COMPLETE_RUNS_STATEMENT, COMPLETE_RUNS, [[], [], [], [], []]],
    ] as const) {
      const clients = [await p.connect(), await p.connect()];
      try {
        for (const c of clients) {
          const { rows } = await c.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
          expect(rows.map((r) => r.name)).toContain(name);
          // node-postgres knows it too: the next use binds the prepared statement rather than preparing it again.
          const again = await c.query({ name, text, values: [...values] });
          expect(again.rowCount).toBe(0);
        }
      } finally {
        clients.forEach((c) => c.release());
      }
    }
  });
});
