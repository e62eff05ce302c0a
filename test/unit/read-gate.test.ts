import { describe, expect, it } from 'vitest';
import { ReadGate, readGateLimits } from '../../daemon/grpc/read-gate.js';
import { TimelaneError } from '../../daemon/errors.js';

/** A read that finishes when told to. */
function deferred(): { read: () => Promise<string>; finish: (v: string) => void; started: () => boolean } {
  let finish!: (v: string) => void;
  let started = false;
  const p = new Promise<string>((r) => (finish = r));
  return {
    read: () => {
      started = true;
      return p;
    },
    finish: (v) => finish(v),
    started: () => started,
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ReadGate', () => {
  it('runs at most maxRunning reads at once and hands a finished slot to the oldest waiter', async () => {
    const gate = new ReadGate({ what: 'ListRuns', maxRunning: 2, maxWaiting: 10 });
    const reads = Array.from({ length: 4 }, deferred);
    const results = reads.map((r) => gate.run(r.read));
    await tick();
    expect(reads.map((r) => r.started())).toEqual([true, true, false, false]);
    expect([gate.inFlight, gate.queued]).toEqual([2, 2]);

    reads[1].finish('b');
    await tick();
    expect(reads.map((r) => r.started())).toEqual([true, true, true, false]);
    // A newcomer does not overtake the queue.
    const late = deferred();
    const lateResult = gate.run(late.read);
    reads[0].finish('a');
    await tick();
    expect(reads[3].started()).toBe(true);
    expect(late.started()).toBe(false);

    reads[2].finish('c');
    reads[3].finish('d');
    await tick();
    expect(late.started()).toBe(true);
    late.finish('e');
    expect(await Promise.all([...results, lateResult])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect([gate.inFlight, gate.queued]).toEqual([0, 0]);
  });

  it('refuses with RESOURCE_EXHAUSTED, naming the read, once maxWaiting reads wait', async () => {
    const gate = new ReadGate({ what: 'ListRuns', maxRunning: 1, maxWaiting: 1 });
    const a = deferred();
    const b = deferred();
    const ra = gate.run(a.read);
    const rb = gate.run(b.read);
    const err = await gate.run(async () => 'never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimelaneError);
    expect((err as TimelaneError).kind).toBe('resource_exhausted');
    expect((err as TimelaneError).message).toMatch(/^ListRuns: 1 running and 1 waiting/);
    a.finish('a');
    b.finish('b');
    expect(await Promise.all([ra, rb])).toEqual(['a', 'b']);
  });

  it('a waiter whose caller goes away leaves the queue and never runs; a failing read frees its slot', async () => {
    const gate = new ReadGate({ what: 'ListRuns', maxRunning: 1, maxWaiting: 5 });
    const a = deferred();
    const ra = gate.run(a.read);
    const gone = new AbortController();
    let ran = false;
    const rb = gate.run(async () => {
      ran = true;
      return 'b';
    }, gone.signal);
    expect(gate.queued).toBe(1);
    gone.abort();
    await expect(rb).rejects.toMatchObject({ kind: 'unavailable' });
    expect(gate.queued).toBe(0);
    a.finish('a');
    await ra;
    expect(ran).toBe(false);
    // Already gone before asking: refused without queueing.
    await expect(gate.run(async () => 'c', AbortSignal.abort())).rejects.toMatchObject({ kind: 'unavailable' });

    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(gate.inFlight).toBe(0);
    expect(await gate.run(async () => 'd')).toBe('d');
  });

  it('derives its limits from the pool: half of it (at least one), 32 waiting per slot', () => {
    expect(readGateLimits(6)).toEqual({ maxRunning: 3, maxWaiting: 96 });
    expect(readGateLimits(16)).toEqual({ maxRunning: 8, maxWaiting: 256 });
    expect(readGateLimits(1)).toEqual({ maxRunning: 1, maxWaiting: 32 });
    expect(() => new ReadGate({ what: 'x', maxRunning: 0, maxWaiting: 1 })).toThrow(/maxRunning/);
  });
});
