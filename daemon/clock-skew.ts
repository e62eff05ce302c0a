/**
 * Measures Postgres's clock against ours: skew = db now − midpoint of the
 * round trip. Delivery leases are judged by Postgres's clock and fire times
 * by ours, so a large skew is worth an alert; it is exported as a gauge.
 */
import type { Db } from './db/pool.js';
import { query } from './db/pool.js';
import { DB_CLOCK } from './db/queries/window.js';

export async function measureClockSkew(db: Db): Promise<{ skewMs: number; rttMs: number }> {
  const t0 = performance.now();
  const wall0 = Date.now();
  const { rows } = await query<{ now_ms: number }>(db, DB_CLOCK);
  const rttMs = performance.now() - t0;
  return { skewMs: rows[0].now_ms - (wall0 + rttMs / 2), rttMs };
}
