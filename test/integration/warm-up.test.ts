/**
 * The warm-up (daemon/engine/warm-up.ts) runs synthetic runs through the
 * per-run code of the fire path before the daemon owns a shard. Asserted on a
 * real Postgres: it runs every run it was asked for; it writes nothing (no
 * job, no run) and touches nothing of the engine (no delivery, no metric,
 * no stream left in the hub); and the rows it parses have exactly the shape
 * (fields and their types) of what a real claim returns, so it warms the
 * code a claim runs rather than some other shape of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, scheduleInput, waitFor } from '../helpers/daemon-parts.js';
import { createPool, query, type Db } from '../../daemon/db/pool.js';
import { WARM_UP_FIRED_ROWS } from '../../daemon/db/queries/dispatch.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { systemClock } from '../../daemon/fast/clock.js';
import { warmUp } from '../../daemon/engine/warm-up.js';

let db: TestDatabase;
let pool: Db;
let parts: DaemonParts | undefined;

beforeAll(async () => {
  db = await createTestDatabase(2);
  pool = createPool({ ...db.opts, poolSize: 4 });
  parts = new DaemonParts({ db: pool, shardCount: 2, claimAheadMs: 0 });
});

afterAll(async () => {
  await parts?.stop();
  await pool?.end();
  await db?.drop();
});

const count = async (table: string): Promise<number> => Number((await query<{ n: string }>(pool, `SELECT count(*) AS n FROM ${table}`)).rows[0].n);

describe('warm-up', () => {
  it('runs every synthetic run through the fire path and leaves no trace: no row, no delivery, no metric', async () => {
    const report = await warmUp(pool, parts!.engine.answers, systemClock, 2_500);
    expect(report.runs).toBe(2_500);
    expect(await count('runs')).toBe(0);
    expect(await count('jobs')).toBe(0);
    expect(parts!.deliveries).toEqual([]);
    expect(Object.keys(parts!.engine.hub.streamsPerQueue())).toEqual(['*']); // the recorder only: the warm-up's stream is gone
    expect(parts!.engine.hub.inFlightOf('timelane:warm-up')).toEqual([]);
    const fired = (await parts!.metrics.registry.getSingleMetricAsString('timelane_runs_fired_total')).match(/ (\d+)$/m)?.[1];
    expect(fired).toBe('0');
    const staged = (await parts!.metrics.registry.getSingleMetricAsString('timelane_runs_staged_total')).match(/ (\d+)$/m)?.[1];
    expect(staged).toBe('0');
  });

  it('parses rows of exactly the shape a claim returns (same fields, same types)', async () => {
    await parts!.own([0, 1]);
    await parts!.scheduling.schedule([scheduleInput(Date.now() + 100)]);
    await waitFor(() => parts!.deliveries.length >= 1, 10_000, 'a claimed run');
    const real = parts!.deliveries[0].run;
    const { rows } = await query<FiredRunRow>(pool, WARM_UP_FIRED_ROWS, [1]);
    const shape = (r: object) => Object.entries(r).map(([k, v]) => `${k}:${v === null ? 'null' : Buffer.isBuffer(v) ? 'buffer' : typeof v}`);
    expect(Object.keys(rows[0])).toEqual(Object.keys(real));
    // Types agree wherever both have a value (a real run's nullable fields may be null).
    const realShape = new Map(shape(real).map((s) => s.split(':') as [string, string]));
    for (const [k, t] of shape(rows[0]).map((s) => s.split(':') as [string, string])) if (t !== 'null' && realShape.get(k) !== 'null') expect(`${k}:${t}`).toBe(`${k}:${realShape.get(k)}`);
  });
});
