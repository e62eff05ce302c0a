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

  // Why: held runs went back to the claim in the order they were held (due order), so a high-priority run due
  // behind a backlog of a limited or slow queue waited for the whole backlog (a hunt: 1,178 runs and 15 s).
  it('held runs go back to the claim best first: a high-priority run is not left behind the backlog', async () => {
    await parts?.stop();
    await db?.drop();
    db = await createTestDatabase(1);
    parts = new DaemonParts({ db: db.pool, shardCount: 1, recorderCredit: 5 });
    const p = parts;
    const order: FiredRunRow[] = [];
    // A worker of credit 5 that, once `answering`, answers each run a millisecond later: the parked backlog drains
    // over about a second, so the claimer sees the queue's room open well before it is empty.
    let answering = false;
    const answer = (run: FiredRunRow): void => void setTimeout(() => p.engine.hub.settle(2, run.id), 1);
    p.engine.hub.register({
      id: 2,
      workerId: 'prio',
      queues: new Set(['prio']),
      credit: 5,
      send: (run) => {
        order.push(run);
        if (answering) answer(run);
      },
    });
    await p.own([0]);
    const due = Date.now() + 500;
    for (let i = 0; i < SLOW; i += 1_000)
      await p.scheduling.schedule(Array.from({ length: 1_000 }, () => scheduleInput(due, { queue: 'prio', leaseMs: 60_000 })));
    // Due after the backlog, so held behind it; but first by priority.
    await p.scheduling.schedule(Array.from({ length: 5 }, () => scheduleInput(due + 50, { queue: 'prio', leaseMs: 60_000, priority: 1_000 })));
    // Every run the queue has no room for is held, the high-priority ones among them; then the worker starts answering.
    await waitFor(async () => p.claimer.heldBack > 0 && p.claimer.heldBack === SLOW + 5 - (await firedCount('prio')), 10_000, 'the backlog held');
    expect(order).toHaveLength(5);
    answering = true;
    for (const r of order) answer(r);
    await waitFor(() => order.length === SLOW + 5, 20_000, `every run handed out (got ${order.length})`);
    const positions = order.flatMap((r, i) => (r.priority === 1_000 ? [i] : []));
    expect(positions).toHaveLength(5);
    // Claimed with the first room (and then first of the parked runs): 160–205 here; before, about 1,010 (after
    // every run held before them).
    expect(Math.max(...positions), `positions ${positions.join(', ')}`).toBeLessThan(800);
  }, 40_000);
});
