/**
 * The claimer's held-back path, in-process over a real Postgres: runs of a
 * queue whose room in delivery is full are left scheduled by the claim, held
 * by queue in the claimer, and never stop another queue's runs; held runs of
 * a shard this daemon no longer owns are dropped (the new owner fires them).
 *
 * The recorder sink takes every queue with a credit of 5 and never answers,
 * so queue `slow` fills its room (MIN_ROOM, 1,000 runs parked); queue `fast`
 * has a stream of its own with room to spare.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { MIN_CLAIM_BATCH } from '../../daemon/dispatch/delivery-hub.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, scheduleInput, waitFor } from '../helpers/daemon-parts.js';

const SLOW = 2_000;
const FAST = 20;
/** DeliveryHub's MIN_ROOM: the most runs of one backed-up queue parked, give or take a claim batch. */
const ROOM = 1_000;

let db: TestDatabase | undefined;
let parts: DaemonParts | undefined;
afterAll(async () => {
  await parts?.stop();
  await db?.drop();
});

async function firedCount(queue: string): Promise<number> {
  const { rows } = await db!.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE queue = $1 AND status = 'fired'`, [queue]);
  return rows[0].n;
}

describe('claims held back for a full queue', () => {
  it('a full queue’s due runs are held, not claimed; another queue’s runs go out on time; a lost shard’s held runs are dropped', async () => {
    db = await createTestDatabase(1);
    parts = new DaemonParts({ db: db.pool, shardCount: 1, recorderCredit: 5 });
    const p = parts;
    const fast: { run: FiredRunRow; at: number }[] = [];
    p.engine.hub.register({ id: 1, workerId: 'fast', queues: new Set(['fast']), credit: 100, send: (run, at) => fast.push({ run, at }) });
    await p.own([0]);

    const slowDue = Date.now() + 500;
    for (let i = 0; i < SLOW; i += 1_000)
      await p.scheduling.schedule(Array.from({ length: 1_000 }, () => scheduleInput(slowDue, { queue: 'slow', leaseMs: 60_000 })));
    // Due 300 ms after slow's runs, and after the slow writes returned: on a loaded machine 2,000 writes can take
    // longer than slowDue's 500 ms lead, and a fast run due before it is scheduled is late before it exists.
    const fastDue = Math.max(slowDue, Date.now()) + 300;
    await p.scheduling.schedule(Array.from({ length: FAST }, (_, i) => scheduleInput(fastDue + i * 10, { queue: 'fast', leaseMs: 60_000 })));
    const fastScheduled = Date.now();

    // Every fast run goes out, on time (counted from the later of due and its schedule call's return), although
    // slow's room is used up.
    await waitFor(() => fast.length === FAST, 10_000, `${FAST} fast runs delivered (got ${fast.length}; held back ${p.claimer.heldBack})`);
    expect(fast.every((f) => f.at >= f.run.due_at_ms)).toBe(true);
    const lateness = fast.map((f) => f.at - Math.max(f.run.due_at_ms, fastScheduled));
    expect(Math.max(...lateness), `lateness ${lateness.join(', ')} ms`).toBeLessThan(1_000);

    // Slow's runs past its room are held in the claimer, still scheduled in Postgres.
    await waitFor(() => p.claimer.heldBack > 0, 5_000, 'slow runs held back');
    const fired = await firedCount('slow');
    expect(fired).toBeGreaterThanOrEqual(ROOM);
    expect(fired).toBeLessThanOrEqual(ROOM + MIN_CLAIM_BATCH + 5);
    expect(p.engine.hub.fullQueues()).toEqual(['slow']);
    await waitFor(() => p.claimer.heldBack === SLOW - fired, 5_000, `every unclaimed slow run held (held ${p.claimer.heldBack}, unclaimed ${SLOW - fired})`);
    // Held, not claimed again and again: the count of fired slow runs stays put.
    expect(await firedCount('slow')).toBe(fired);

    // The shard goes: its held runs are the next owner's, and are dropped here.
    p.leases.setDesired([]);
    await waitFor(() => !p.leases.isOwned(0), 5_000, 'shard 0 released');
    await waitFor(() => p.claimer.heldBack === 0, 5_000, `held runs of the lost shard dropped (held ${p.claimer.heldBack})`);
  }, 30_000);
});
