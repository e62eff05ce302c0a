/**
 * Claim misses whose checks fail. The claim misses a run it popped when
 * Postgres says otherwise (here: rescheduled later, and the notification
 * never came); the miss checks then find it still scheduled and offer it back
 * at its new time. When one of those checks errors (a dropped connection, a
 * restart), the runs are offered again after a pause, as after a failed
 * claim: otherwise only the repair scan (every 30 s by default) would ever
 * bring them back. And when the lookup of runs left for a full queue
 * (HELD_BACK) fails, its runs are explained as plain misses, offered back,
 * and held on the next claim: none fired twice, none lost.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../../daemon/db/pool.js';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { HELD_BACK } from '../../daemon/db/queries/dispatch.js';
import { SCHEDULED_STATUS } from '../../daemon/db/queries/window.js';
import { Claimer } from '../../daemon/dispatch/claimer.js';
import type { Logger } from '../../daemon/log.js';
import { Metrics } from '../../daemon/metrics.js';
import type { RunRef } from '../../daemon/run-ref.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, fenceOf, FixedFences, insertRuns, scheduleInput, waitFor } from '../helpers/daemon-parts.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 4;
const SHARD = 1;

let db: TestDatabase;
let pool: Db;
let parts: DaemonParts | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  pool = track(createPool({ ...db.opts, poolSize: 4 }), 'claim pool');
});

afterAll(async () => {
  await parts?.stop();
  if (pool) {
    await pool.end();
    untrack(pool);
  }
  await db?.drop();
});

/** `pool`, but its first `times` queries whose text satisfies `matches` fail (as a dropped connection would). */
function failingDb(inner: Db, matches: (text: string) => boolean, times: number) {
  const state = { failed: 0 };
  const query = async (...args: unknown[]): Promise<unknown> => {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    if (state.failed < times && matches(text)) {
      state.failed++;
      throw new Error('Connection terminated unexpectedly (injected)');
    }
    return (inner.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
  };
  const proxy = new Proxy(inner, { get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop, target)) }) as Db;
  return { db: proxy, state };
}

function recordingLogger(lines: string[]): Logger {
  const log = {
    warn: (obj: unknown, msg?: string) => lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
    error: (obj: unknown, msg?: string) => lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
    info: () => undefined,
    debug: () => undefined,
  };
  return log as unknown as Logger;
}

describe('a claim miss whose check fails', () => {
  it('is offered again after the pause, and fires once at its new time', async () => {
    const [run] = await insertRuns(pool, SHARD, [Date.now() - 10]);
    // Rescheduled 800 ms later behind the daemon's back: the claim at the old time misses it.
    const newDueMs = Date.now() + 800;
    await pool.query('UPDATE runs SET due_at = to_timestamp($2 / 1000.0) WHERE id = $1', [run.id, newDueMs]);

    const fences = new FixedFences(new Map([[SHARD, await fenceOf(pool, SHARD)]]));
    const broken = failingDb(pool, (text) => text === SCHEDULED_STATUS, 1);
    const delivered: FiredRunRow[] = [];
    const reoffered: RunRef[] = [];
    const timers = new Set<NodeJS.Timeout>();
    const warnings: string[] = [];
    const claimer: Claimer = new Claimer({
      db: pool,
      readDb: broken.db,
      fences,
      deliver: (r) => delivered.push(r),
      cancelRunning: () => undefined,
      // As the fast lane would: fire it at its due time.
      reoffer: (r) => {
        reoffered.push(r);
        const t = setTimeout(() => {
          timers.delete(t);
          claimer.fire([r], Date.now());
        }, Math.max(0, r.dueAtMs - Date.now()));
        timers.add(t);
      },
      metrics: new Metrics(),
      log: recordingLogger(warnings),
      wallNow: () => Date.now(),
      claimAheadMs: 0,
    });
    try {
      claimer.fire([{ runId: run.id, shard: SHARD, dueAtMs: run.due_at_ms, priority: 0 }], Date.now());
      // Without the retry the run stays scheduled and out of the heap: nothing before the repair scan.
      await waitFor(() => delivered.length > 0, 5_000, 'the rescheduled run to fire');
      expect(broken.state.failed).toBe(1);
      expect(warnings.some((w) => w.includes('could not check claim misses'))).toBe(true);
      expect(delivered.map((r) => r.id)).toEqual([run.id]);
      // Fired at its new time, never before it.
      expect(Date.now()).toBeGreaterThanOrEqual(newDueMs);
      expect(reoffered.at(-1)?.dueAtMs).toBe(newDueMs);
      await waitFor(() => claimer.claimsInFlight === 0 && timers.size === 0, 2_000, 'the claimer to settle');
      expect(delivered).toHaveLength(1);
    } finally {
      for (const t of timers) clearTimeout(t);
    }
  });
});

describe('a held-back lookup that fails', () => {
  it('explains its runs as misses and offers them back; the next claim holds them: none fired twice, none lost', async () => {
    const SLOW = 1_500;
    /** DeliveryHub's MIN_ROOM: the most runs of one backed-up queue parked, give or take a claim batch. */
    const ROOM = 1_000;
    const broken = failingDb(pool, (text) => text === HELD_BACK, 1);
    // The recorder takes every queue with a credit of 5 and never answers: the queue's room fills, and stays full.
    parts = new DaemonParts({ db: pool, windowDb: broken.db, shardCount: SHARDS, recorderCredit: 5 });
    const p = parts;
    await p.own([0, 1, 2, 3]);
    const due = Date.now() + 500;
    for (let i = 0; i < SLOW; i += 500) await p.scheduling.schedule(Array.from({ length: 500 }, () => scheduleInput(due, { queue: 'full', leaseMs: 60_000 })));
    const firedIn = async (): Promise<number> =>
      (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE queue = 'full' AND status = 'fired'`)).rows[0].n;

    await waitFor(async () => p.claimer.heldBack > 0 && p.claimer.heldBack + (await firedIn()) === SLOW, 10_000, `every run fired or held (held ${p.claimer.heldBack})`);
    expect(broken.state.failed).toBe(1);
    const fired = await firedIn();
    expect(fired).toBeGreaterThanOrEqual(ROOM);
    expect(p.claimer.heldBack).toBe(SLOW - fired);
    // The daemon handed out exactly the runs Postgres has fired (each once), and the rest are still scheduled.
    const handedOut = (await p.metrics.registry.getSingleMetric('timelane_runs_fired_total')?.get())?.values.reduce((n, v) => n + v.value, 0);
    expect(handedOut).toBe(fired);
    const { rows } = await pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs WHERE queue = 'full' GROUP BY status ORDER BY status`);
    expect(rows).toEqual([
      { status: 'fired', n: fired },
      { status: 'scheduled', n: SLOW - fired },
    ]);
  }, 30_000);
});
