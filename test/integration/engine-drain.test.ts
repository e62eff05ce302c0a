/**
 * A stopping daemon's engine (drain): runs it claimed but could not hand to
 * any worker (no credit) go back to Postgres with their lease ended, so the
 * next owner's reaper redelivers them at once instead of after a whole lease.
 */
import { afterAll, describe, expect, it } from 'vitest';
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
    // The shards are released only after drain (daemon.ts): reaper passes could still run meanwhile.
    await new Promise((r) => setTimeout(r, 300));
    const states = await runStates(db.pool, ids);
    // Before: redelivered by a pass after the hand-back (deliveries + 1, a fresh 60 s lease), parked again.
    expect(states.get(parked)).toMatchObject({ status: 'fired', fired_at_ms: null, deliveries: deliveriesBefore });
    expect(states.get(parked)!.lease_expires_at_ms!).toBeLessThanOrEqual(before + 1_000);
    expect(states.get(sent)!.lease_expires_at_ms!).toBeGreaterThan(before + 50_000);
  });
});
