/**
 * Runs claimed but parked for credit. A stopping daemon's engine (drain)
 * hands them back to Postgres with their lease ended, so the next owner's
 * reaper redelivers them at once instead of after a whole lease. While the
 * daemon runs, its own reaper leaves them alone, however long they wait.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DaemonParts, runStates, scheduleInput, waitFor } from '../helpers/daemon-parts.js';

let db: TestDatabase | undefined;
let parts: DaemonParts | undefined;
afterAll(async () => {
  await parts?.stop();
  await db?.drop();
});

describe('engine drain', () => {
  it('hands runs parked for credit back with their lease ended; the one sent keeps its lease', async () => {
    db = await createTestDatabase(1);
    // The reaper passes every 50 ms: none may take the handed-back run again while the daemon stops.
    parts = new DaemonParts({ db: db.pool, shardCount: 1, recorderCredit: 1, reapIntervalMs: 50 });
    const p = parts;
    await p.own([0]);
    const due = Date.now() + 200;
    const scheduled = await p.scheduling.schedule([scheduleInput(due, { leaseMs: 60_000 }), scheduleInput(due + 1, { leaseMs: 60_000 })]);
    const ids = scheduled.map((s) => s.run.id);
    await waitFor(() => p.deliveries.length === 1 && p.engine.hub.backlog === 1, 5_000, 'one run sent, one parked for credit');
    const sent = p.deliveries[0].run.id;
    const parked = ids.find((id) => id !== sent)!;

    const before = Date.now();
    const deliveriesBefore = (await runStates(db.pool, [parked])).get(parked)!.deliveries;
    await p.engine.drain();
    expect(p.engine.hub.backlog).toBe(0);
    // The shards are released only after drain (daemon.ts): a reaper pass would come now, were the reaper not stopped in drain().
    await new Promise((r) => setTimeout(r, 300));
    const states = await runStates(db.pool, ids);
    // Before: redelivered by a pass after the hand-back (deliveries + 1, a fresh 60 s lease), parked again.
    expect(states.get(parked)).toMatchObject({ status: 'fired', fired_at_ms: null, deliveries: deliveriesBefore });
    expect(states.get(parked)!.lease_expires_at_ms!).toBeLessThanOrEqual(before + 1_000);
    expect(states.get(sent)!.lease_expires_at_ms!).toBeGreaterThan(before + 50_000);
  });

  // Why: the reaper took a parked run whose lease had run out (it never reached a worker) and "redelivered" it:
  // it reached its worker as delivery 2, 3, …, and counted as redelivered each lease (a hunt: 3,911 for 2,500 runs).
  it('leaves a run parked longer than its lease alone: it reaches its worker as its first delivery', async () => {
    await parts?.stop();
    await db?.drop();
    db = await createTestDatabase(1);
    parts = new DaemonParts({ db: db.pool, shardCount: 1, recorderCredit: 1, reapIntervalMs: 50 });
    const p = parts;
    await p.own([0]);
    const due = Date.now() + 200;
    const scheduled = await p.scheduling.schedule([scheduleInput(due, { leaseMs: 600, queue: 'q' }), scheduleInput(due + 1, { leaseMs: 600, queue: 'q' })]);
    const ids = scheduled.map((s) => s.run.id);
    await waitFor(() => p.deliveries.length >= 1 && p.engine.hub.backlog === 1, 5_000, 'one run sent, one parked for credit');
    const sent = p.deliveries[0].run.id;
    const parked = ids.find((id) => id !== sent)!;
    // The sent run is never answered: the reaper hands it out again each lease. Three times proves passes
    // well past the parked run's lease too.
    await waitFor(() => p.deliveries.filter((d) => d.run.id === sent).length >= 4, 10_000, 'the unanswered run redelivered three times');
    expect((await runStates(db.pool, [parked])).get(parked)).toMatchObject({ status: 'fired', deliveries: 1, fired_at_ms: null });
    expect(p.deliveries.some((d) => d.run.id === parked)).toBe(false);
    // A worker with credit comes: the parked run goes out as delivery 1, its lease restarted for the worker.
    const got: { run: FiredRunRow; at: number }[] = [];
    p.engine.hub.register({ id: 7, workerId: 'late', queues: new Set(['q']), credit: 1, send: (run, at) => got.push({ run, at }) });
    await waitFor(() => got.some((d) => d.run.id === parked), 5_000, 'the parked run handed out');
    const handed = got.find((d) => d.run.id === parked)!;
    expect(handed.run.deliveries).toBe(1);
    // Restarted just before the hand-out (a full 600 ms then): more than half of it is left at the hand-out.
    expect(handed.run.lease_expires_at_ms!).toBeGreaterThan(handed.at + 300);
  });
});
