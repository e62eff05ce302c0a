import { afterEach, describe, expect, it } from 'vitest';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { ReleaseGate } from '../../daemon/dispatch/release-gate.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { firedRunRow } from '../helpers/fired-run.js';

describe('ReleaseGate', () => {
  let gate: ReleaseGate | undefined;
  afterEach(() => gate?.stop());

  function setup(stage: (run: FiredRunRow, startInMs: number) => boolean) {
    const clock = new FakeClock({ timerEarlyMs: 1 });
    const released: { id: number; wall: number }[] = [];
    gate = new ReleaseGate(clock, (run) => released.push({ id: run.id, wall: clock.wallNow() }), () => {}, stage);
    gate.start();
    return { clock, released, gate, t0: clock.wallNow() };
  }

  it('a run a worker can hold is staged at once with the time left until due, and not kept', () => {
    const staged: { id: number; startInMs: number }[] = [];
    const { clock, released, gate, t0 } = setup((run, startInMs) => (staged.push({ id: run.id, startInMs }), true));
    gate.admit(firedRunRow(1, { due_at_ms: t0 + 15 }));
    expect(staged).toHaveLength(1);
    // Never short of the time left (the baseline puts deadlines a hair late), and not more than a hair over.
    expect(staged[0].startInMs).toBeGreaterThanOrEqual(15);
    expect(staged[0].startInMs).toBeLessThan(15.5);
    expect(gate.size).toBe(0);
    clock.advance(50);
    expect(released).toEqual([]);
  });

  it('one no worker can hold now waits here and is released at its due time, never before', () => {
    const { clock, released, gate, t0 } = setup(() => false);
    gate.admit(firedRunRow(1, { due_at_ms: t0 + 15 }));
    expect(gate.size).toBe(1);
    clock.advance(14);
    expect(released).toEqual([]);
    clock.advance(5);
    expect(released.map((r) => r.id)).toEqual([1]);
    expect(released[0].wall).toBeGreaterThanOrEqual(t0 + 15);
  });

  it('a run already due is released at once, never staged', () => {
    let asked = 0;
    const { released, gate, t0 } = setup(() => (asked++, true));
    gate.admit(firedRunRow(1, { due_at_ms: t0 }));
    expect(released.map((r) => r.id)).toEqual([1]);
    expect(asked).toBe(0);
  });

  it('a wall clock stepped back (not yet noticed by the watch) makes the hold longer, as the wall clock says, never shorter', () => {
    const staged: number[] = [];
    const { clock, gate, t0 } = setup((_run, startInMs) => (staged.push(startInMs), true));
    clock.stepWall(-40);
    gate.admit(firedRunRow(1, { due_at_ms: t0 + 15 }));
    // The wall clock now says 55 ms are left.
    expect(staged[0]).toBeGreaterThanOrEqual(55);
    // A step of under a millisecond is indistinguishable from Date.now()'s truncation: the deadline holds.
    clock.stepWall(39.5);
    gate.admit(firedRunRow(2, { due_at_ms: t0 + 15 }));
    expect(staged[1]).toBeGreaterThanOrEqual(15);
    expect(staged[1]).toBeLessThan(15.5);
  });
});
