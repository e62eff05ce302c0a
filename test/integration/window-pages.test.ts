/**
 * The loader's sliced keyset scan over several shards (daemon/slow/loader.ts,
 * `pages`): each page is bounded by a due-time slice sized from the density
 * just seen. Whatever the density — overdue runs, one millisecond holding
 * several pages, a dense stretch, a sparse tail, runs past the window — a
 * first load offers every scheduled run of the owned shards due within the
 * window exactly once, in (due_at, id) order; a scan stopped by the memory
 * cap keeps exactly the earliest runs. Runs are inserted with SQL (the
 * scheduling path is not under test) on a database of their own.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FastLane } from '../../daemon/fast/fast-lane.js';
import type { RunRef } from '../../daemon/run-ref.js';
import { systemClock } from '../../daemon/fast/clock.js';
import { silentLogger } from '../../daemon/log.js';
import { parseWindowPage, WindowLoader, type WindowSink } from '../../daemon/slow/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const SHARDS = 8;
const OWNED = [0, 1, 2, 3, 4, 5];
const W = 600_000;
let db: TestDatabase;
let now = 0;
/** Every inserted run of an owned shard due within the window, in (due, id) order. */
let expected: { id: number; due: number }[] = [];
let loader: WindowLoader | undefined;
let lane: FastLane | undefined;

/** Inserts `n` runs over all shards, run k due at due(k). */
async function insert(n: number, due: string): Promise<void> {
  await db.pool.query(
    `INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key)
     SELECT j.id, j.shard, 'pages', (k % 3) - 1, 1, 'scheduled', to_timestamp((${due}) / 1000.0), j.id::text || ':' || k || ':' || random()
     FROM generate_series(0, $2::int8 - 1) k JOIN jobs j ON j.shard = (k % ${SHARDS})::int AND j.queue = 'pages'`,
    [now, n],
  );
}

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  now = Date.now();
  await db.pool.query(
    `INSERT INTO jobs (id, namespace, queue, shard, payload, priority, delivery, max_attempts, initial_backoff_ms, max_backoff_ms, lease_ms, status)
     SELECT md5('pages-' || s)::uuid, 'default', 'pages', s, '\\x'::bytea, 0, 'at_least_once', 1, 100, 1000, 30000, 'active'
     FROM generate_series(0, ${SHARDS - 1}) s`,
  );
  await insert(600, '$1::int8 - 60000 + k * 97'); // overdue
  await insert(5_000, '$1::int8 + 10000'); // one millisecond, several pages
  await insert(10_000, '$1::int8 + 20000 + floor(k / 2)'); // dense: 2 per ms over 5 s
  await insert(300, '$1::int8 + 100000 + k * 1500'); // sparse tail, up to now + 550 s
  await insert(200, `$1::int8 + ${W} + 60000 + k`); // past the window
  const { rows } = await db.pool.query<{ id: string; due: string }>(
    `SELECT id, (extract(epoch FROM due_at) * 1000)::int8 AS due FROM runs
     WHERE shard = ANY($1::int[]) AND status = 'scheduled' AND due_at <= to_timestamp(($2::int8 + ${W}) / 1000.0) ORDER BY due_at, id`,
    [OWNED, now],
  );
  expected = rows.map((r) => ({ id: Number(r.id), due: Number(r.due) }));
});
afterEach(async () => {
  await loader?.stop();
  lane?.stop();
  loader = lane = undefined;
});
afterAll(async () => {
  await db?.drop();
});

/** A loader over an idle lane whose offers are recorded in order; every owned shard added before the one pass. */
async function firstLoad(maxInWindow: number): Promise<{ offered: RunRef[]; l: FastLane; w: WindowLoader }> {
  const l = new FastLane({ clock: systemClock, onFire: () => undefined });
  const offered: RunRef[] = [];
  const sink: WindowSink = {
    offer: (run) => {
      offered.push({ ...run });
      l.offer(run);
    },
    cancel: (id) => l.cancel(id),
    dropShard: (s) => l.dropShard(s),
    has: (id) => l.has(id),
    get size() {
      return l.size;
    },
  };
  const w = new WindowLoader(db.pool, sink, systemClock, silentLogger, { windowMs: W, maxInWindow, loadIntervalMs: 600_000, repairIntervalMs: 600_000 });
  lane = l;
  loader = w;
  for (const s of OWNED) w.addShard(s); // not started yet: no pass runs until the kick below
  w.start();
  w.kick();
  await w.settle();
  return { offered, l, w };
}

describe('the sliced window scan', () => {
  it('parses a page: four integers per run, negative priorities, no run', () => {
    expect([...parseWindowPage('12,3,-1,1700000000123,9007199254740991,0,1000,5', 2)]).toEqual([12, 3, -1, 1700000000123, 9007199254740991, 0, 1000, 5]);
    expect(parseWindowPage(null, 10)).toHaveLength(0);
    expect(() => parseWindowPage('1,2,3', 1)).toThrow(/4 per run/);
  });

  it('a first load offers every run of the owned shards in the window once, in (due, id) order', async () => {
    expect(expected.length).toBeGreaterThan(10_000);
    const { offered, l, w } = await firstLoad(1_000_000);
    expect(offered.map((o) => o.runId)).toEqual(expected.map((e) => e.id));
    expect(offered.every((o) => OWNED.includes(o.shard))).toBe(true);
    expect(offered.map((o) => o.dueAtMs)).toEqual(expected.map((e) => e.due));
    expect(l.size).toBe(expected.length);
    for (const s of OWNED) expect(w.loadedUntil(s)).toBeGreaterThanOrEqual(now + W);
    // The 5,000 runs of one millisecond and the dense stretch took several pages each.
    expect(w.stats.loaded).toBe(expected.length);
  });

  it('a scan stopped by the memory cap keeps exactly the earliest runs, and the next scan goes on from there', async () => {
    const CAP = 7_000;
    const { offered, l, w } = await firstLoad(CAP);
    expect(l.size).toBe(CAP);
    expect(offered.map((o) => o.runId)).toEqual(expected.slice(0, CAP).map((e) => e.id));
    const until = w.loadedUntil(OWNED[0]) as number;
    expect(until).toBe(expected[CAP - 1].due - 1); // ties at the last due time are read again
    // Room again: the window moves on from there, and nothing is offered twice.
    for (const e of expected.slice(0, 2_000)) l.cancel(e.id);
    w.kick();
    await w.settle();
    const ids = offered.map((o) => o.runId);
    expect(new Set(ids).size).toBe(ids.length);
    // The second scan read the next 2,000 rows after `until`; those held already (ties at the cut) were skipped.
    const first = new Set(ids.slice(0, CAP));
    const next = expected.filter((e) => e.due > until).slice(0, 2_000);
    expect(ids.slice(CAP)).toEqual(next.filter((e) => !first.has(e.id)).map((e) => e.id));
    expect(l.size).toBe(CAP - 2_000 + ids.length - CAP);
  });
});
