import { describe, expect, it } from 'vitest';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import { ALL_QUEUES, DeliveryHub, MIN_CLAIM_BATCH, type WorkerSink } from '../../daemon/dispatch/delivery-hub.js';
import { firedRunRow } from '../helpers/fired-run.js';
import { LocalPermits } from '../../daemon/dispatch/queue-limits.js';

const run = firedRunRow;

interface TestSink extends WorkerSink {
  got: FiredRunRow[];
}

let nextId = 1;
function sink(credit: number, queues: string[] = ['q']): TestSink {
  const got: FiredRunRow[] = [];
  const id = nextId++;
  return { id, workerId: `w${id}`, queues: new Set(queues), credit, got, send: (r) => got.push(r) };
}

const ids = (s: TestSink): number[] => s.got.map((r) => r.id);

/** A delivery gate over in-process permits that limits queue 'q' to `maxInFlight` (while `limited.on`). */
function limitedQueue(maxInFlight: number, limited = { on: true }) {
  const permits = new LocalPermits();
  const limit = { maxInFlight, maxPerSecond: 0 };
  const gate = {
    limitOf: (queue: string) => (queue === 'q' && limited.on ? limit : undefined),
    acquire: (queue: string, runId: number, l: typeof limit, nowMs: number, untilMs: number) => permits.acquire(queue, runId, l, nowMs, untilMs),
    release: (queue: string, runId: number) => void permits.release(queue, runId),
    adopt: async (queue: string, runId: number, nowMs: number, untilMs: number) =>
      (await permits.acquire(queue, runId, { maxInFlight: 2 ** 31 - 1, maxPerSecond: 0 }, nowMs, untilMs)) === true,
  };
  return { gate, permits, limit };
}

describe('DeliveryHub', () => {
  it('respects each stream’s credit and parks the rest', () => {
    const hub = new DeliveryHub();
    const w = sink(2);
    hub.register(w);
    for (let i = 1; i <= 5; i++) hub.deliver(run(i));
    expect(ids(w)).toEqual([1, 2]);
    expect(hub.backlog).toBe(3);
    expect(hub.holds(w.id, 1)).toBe(true);
    expect(hub.holds(w.id, 3)).toBe(false);
  });

  it('spreads runs round robin over the streams of a queue', () => {
    const hub = new DeliveryHub();
    const [a, b, c] = [sink(10), sink(10), sink(10)];
    [a, b, c].forEach((s) => hub.register(s));
    for (let i = 1; i <= 7; i++) hub.deliver(run(i));
    expect([ids(a), ids(b), ids(c)]).toEqual([
      [1, 4, 7],
      [2, 5],
      [3, 6],
    ]);
  });

  it('round robin skips streams without credit', () => {
    const hub = new DeliveryHub();
    const [a, b] = [sink(1), sink(3)];
    hub.register(a);
    hub.register(b);
    for (let i = 1; i <= 5; i++) hub.deliver(run(i));
    expect(ids(a)).toEqual([1]);
    expect(ids(b)).toEqual([2, 3, 4]);
    expect(hub.backlog).toBe(1);
  });

  it('only streams subscribed to the run’s queue receive it', () => {
    const hub = new DeliveryHub();
    const onlyA = sink(10, ['a']);
    const both = sink(10, ['a', 'b']);
    hub.register(onlyA);
    hub.register(both);
    hub.deliver(run(1, { queue: 'b' }));
    hub.deliver(run(2, { queue: 'b' }));
    hub.deliver(run(3, { queue: 'c' }));
    expect(ids(onlyA)).toEqual([]);
    expect(ids(both)).toEqual([1, 2]);
    expect(hub.backlog).toBe(1); // queue c has no subscriber yet
  });

  it('pumps parked runs, oldest first, as credit frees', () => {
    const hub = new DeliveryHub();
    const w = sink(1);
    hub.register(w);
    [1, 2, 3].forEach((i) => hub.deliver(run(i)));
    expect(ids(w)).toEqual([1]);
    hub.settle(w.id, 1);
    expect(ids(w)).toEqual([1, 2]);
    expect(hub.holds(w.id, 1)).toBe(false);
    hub.settle(w.id, 2);
    expect(ids(w)).toEqual([1, 2, 3]);
    expect(hub.backlog).toBe(0);
  });

  it('a settle for a run the stream does not hold changes nothing', () => {
    const hub = new DeliveryHub();
    const [a, b] = [sink(1), sink(1)];
    hub.register(a);
    hub.register(b);
    [1, 2, 3].forEach((i) => hub.deliver(run(i)));
    hub.settle(a.id, 2); // 2 is on b
    hub.settle(999, 1); // no such stream
    expect([ids(a), ids(b), hub.backlog]).toEqual([[1], [2], 1]);
  });

  it('runs parked before any worker connects go to the first subscriber, in order', () => {
    const hub = new DeliveryHub();
    [1, 2, 3].forEach((i) => hub.deliver(run(i)));
    expect(hub.backlog).toBe(3);
    const w = sink(2);
    hub.register(w);
    expect(ids(w)).toEqual([1, 2]);
    expect(hub.backlog).toBe(1);
  });

  it('a redelivery replaces a parked older copy (one copy, the newer identity)', () => {
    const hub = new DeliveryHub();
    hub.deliver(run(1, { deliveries: 1 }));
    hub.deliver(run(1, { deliveries: 2, fence: 3 }));
    expect(hub.backlog).toBe(1);
    const w = sink(5);
    hub.register(w);
    expect(w.got.map((r) => [r.id, r.deliveries, r.fence])).toEqual([[1, 2, 3]]);
  });

  it('a redelivery replaces an in-flight older copy: one delivery held, and it is the newer one', () => {
    const hub = new DeliveryHub();
    const [a, b] = [sink(1), sink(1)];
    hub.register(a);
    hub.register(b);
    hub.deliver(run(1, { deliveries: 1 })); // → a
    hub.deliver(run(1, { deliveries: 2 })); // a's copy is superseded; → b (round robin)
    expect(hub.holds(a.id, 1)).toBe(false);
    expect(hub.holds(b.id, 1)).toBe(true);
    expect(hub.unregister(a.id)).toEqual([]);
    expect(hub.unregister(b.id)).toMatchObject([{ runId: 1, shard: 0, fence: 1, deliveries: 2, recorded: false }]);
  });

  it('a redelivery that moves a run to another stream frees the old stream’s credit for its parked runs', () => {
    const hub = new DeliveryHub();
    const x = sink(1, ['a', 'b']);
    const y = sink(1, ['a']);
    hub.register(x);
    hub.register(y);
    hub.deliver(run(1, { queue: 'a' })); // → x
    hub.deliver(run(2, { queue: 'b' })); // x is full: parked
    expect(hub.backlog).toBe(1);
    hub.deliver(run(1, { queue: 'a', deliveries: 2 })); // redelivered → y; x holds nothing now
    expect(ids(y)).toEqual([1]);
    expect(ids(x)).toEqual([1, 2]);
    expect(hub.backlog).toBe(0);
  });

  it('unregister returns the stream’s unanswered deliveries; its runs are not sent anywhere again by the hub', () => {
    const hub = new DeliveryHub();
    const w = sink(3);
    hub.register(w);
    hub.deliver(run(1, { fence: 4, deliveries: 1 }));
    hub.deliver(run(2, { fence: 4, deliveries: 2 }));
    hub.settle(w.id, 1);
    expect(hub.unregister(w.id)).toMatchObject([{ runId: 2, shard: 0, fence: 4, deliveries: 2, recorded: false }]);
    expect(hub.streamCount).toBe(0);
    expect(hub.unregister(w.id)).toEqual([]);
    hub.deliver(run(3));
    expect(ids(w)).toEqual([1, 2]);
    expect(hub.backlog).toBe(1);
  });

  it('a drained stream (its worker closing) gets no more runs and its credit makes no room, but its answers still settle and it still holds what it had', () => {
    const hub = new DeliveryHub();
    const [closing, other] = [sink(1000), sink(1)];
    hub.register(closing);
    hub.register(other);
    hub.deliver(run(1));
    hub.deliver(run(2));
    expect(hub.room()).toBe(2 * 1001); // twice the open streams' credit
    hub.drain(closing.id);
    expect(hub.room()).toBe(1000); // the floor: the closing stream's credit no longer counts
    // Before, each answer freed credit for another run, and a busy worker never became idle.
    hub.settle(closing.id, 1);
    for (let i = 3; i <= 5; i++) hub.deliver(run(i));
    expect(ids(closing)).toEqual([1]);
    expect(ids(other)).toEqual([2]);
    expect(hub.backlog).toBe(3); // parked for another stream, not for the closing one
    expect(hub.holds(closing.id, 1)).toBe(false);
    hub.settle(other.id, 2);
    expect(ids(other)).toEqual([2, 3]);
    expect(hub.unregister(closing.id)).toEqual([]);
  });

  it('a run whose lease renewal was under way when its stream was drained goes to another stream, with its renewed lease', async () => {
    let renewed: (expiresAt: number) => void = () => undefined;
    const hub = new DeliveryHub(undefined, () => new Promise<number | null>((resolve) => (renewed = resolve)));
    const now = Date.now();
    hub.deliver(run(1, { claimed_at_ms: now - 50_000, lease_expires_at_ms: now + 10_000 })); // parked past half its lease
    const closing = sink(5);
    hub.register(closing); // its hand-out renews the lease first
    const other = sink(5);
    hub.register(other);
    hub.drain(closing.id);
    renewed(now + 60_000);
    await new Promise((r) => setTimeout(r, 10));
    // Before: sent to the closing stream after all.
    expect(ids(closing)).toEqual([]);
    expect(other.got.map((r) => [r.id, r.lease_expires_at_ms])).toEqual([[1, now + 60_000]]);
  });

  it('a run cancelled while its lease restarts before the hand-out is never sent, and its credit is free', async () => {
    let renewed: (expiresAt: number) => void = () => undefined;
    const hub = new DeliveryHub(undefined, () => new Promise<number | null>((resolve) => (renewed = resolve)));
    const now = Date.now();
    hub.deliver(run(1, { claimed_at_ms: now - 50_000, lease_expires_at_ms: now + 10_000 })); // parked past half its lease
    const cancels: number[] = [];
    const w: TestSink = { ...sink(1), cancel: (d) => void cancels.push(d.runId) };
    hub.register(w); // its hand-out renews the lease first
    const { told, parked, renewed: done } = hub.cancel(1, 'cancelled');
    // The caller ends its lease, after the renewal (else the renewal would restart it).
    expect(told).toBe(false);
    expect(parked?.id).toBe(1);
    expect(done).toBeInstanceOf(Promise);
    renewed(now + 60_000);
    await done;
    // Before: the worker was told to stop a run it did not have yet, then the run was sent to it.
    expect(ids(w)).toEqual([]);
    expect(cancels).toEqual([]);
    hub.deliver(run(2));
    expect(ids(w)).toEqual([2]); // its credit was given back
  });

  it('a run of a limited queue parked just before a stream registers (same tick) goes to it at once', async () => {
    const { gate } = limitedQueue(5);
    const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
    hub.deliver(run(1));
    const w = sink(5);
    // Before: the permit loop's flag was dropped a microtask late, so this pump did nothing and the run waited for the next trigger.
    hub.register(w);
    await new Promise((r) => setTimeout(r, 20));
    expect(ids(w)).toEqual([1]);
  });

  it("a limited queue's permit is given back when the lease renewal of a run that waited finds it superseded", async () => {
    const { gate, permits, limit } = limitedQueue(1);
    // The renewal answers null: the run was redelivered (and maybe completed) elsewhere meanwhile.
    const hub = new DeliveryHub(undefined, async () => null, Date.now, gate);
    const now = Date.now();
    // Parked past half its lease before any stream came: its hand-out renews the lease first.
    hub.deliver(run(1, { claimed_at_ms: now - 50_000, lease_expires_at_ms: now + 10_000 }));
    hub.register(sink(5));
    await new Promise((r) => setTimeout(r, 20));
    // Before: 'in_flight' for an hour (PERMIT_MAX_MS), the queue blocked.
    expect(await permits.acquire('q', 2, limit, Date.now(), Date.now() + 1_000)).toBe(true);
  });

  // Why: runs handed out while the queue had no limit took no permit, so a new limit of 2 let 2 more out beside
  // the 30 in flight (a hunt). They now take permits when the limit appears, and count against it.
  it('a queue that gains a limit counts the runs already in flight against it', async () => {
    const limited = { on: false };
    const { gate, permits } = limitedQueue(2, limited);
    const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
    const w = sink(10);
    hub.register(w);
    for (let i = 1; i <= 4; i++) hub.deliver(run(i));
    expect(ids(w)).toEqual([1, 2, 3, 4]); // unlimited: no permits
    limited.on = true;
    hub.adoptInFlight('q');
    for (let i = 0; i < 100 && (await permits.holders('q')).length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await permits.holders('q')).sort()).toEqual([1, 2, 3, 4]);
    hub.deliver(run(5));
    hub.settle(w.id, 1);
    hub.settle(w.id, 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(ids(w)).toEqual([1, 2, 3, 4]); // 2 still in flight: the limit is reached
    hub.settle(w.id, 3);
    for (let i = 0; i < 100 && ids(w).length < 5; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids(w)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a queue whose rate-only limit gains a bound counts the runs in flight (they hold rate tokens, not in-flight permits)', async () => {
    const { gate, permits, limit } = limitedQueue(0);
    limit.maxPerSecond = 1_000;
    const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
    const w = sink(10);
    hub.register(w);
    for (let i = 1; i <= 3; i++) hub.deliver(run(i));
    for (let i = 0; i < 100 && ids(w).length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids(w)).toEqual([1, 2, 3]);
    expect(await permits.holders('q')).toEqual([]); // rate tokens only
    limit.maxInFlight = 2;
    hub.adoptInFlight('q');
    for (let i = 0; i < 100 && (await permits.holders('q')).length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await permits.holders('q')).sort()).toEqual([1, 2, 3]);
    hub.deliver(run(4));
    hub.settle(w.id, 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(ids(w)).toEqual([1, 2, 3]); // 2 in flight: at the bound
  });

  // Why: a failed lease restart (Postgres away) handed the run out under its claim's lease, long run out for a
  // run parked that long: the reaper, once Postgres was back, handed it out again under a worker holding it.
  it('a run whose lease restart fails is not sent under its expired lease: let go, for the reaper', async () => {
    const hub = new DeliveryHub(undefined, async () => {
      throw new Error('Postgres away');
    });
    const now = Date.now();
    hub.deliver(run(1, { claimed_at_ms: now - 50_000, lease_expires_at_ms: now - 1_000 })); // parked past its lease
    hub.deliver(run(2, { claimed_at_ms: now, lease_expires_at_ms: now + 60_000 }));
    const w = sink(1);
    hub.register(w);
    // Run 1's restart fails: it is let go (not held here any more: the reaper may take it) and its credit goes to run 2.
    for (let i = 0; i < 100 && ids(w).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids(w)).toEqual([2]);
    expect(hub.unsentIds()).toEqual([]);
    expect(hub.backlog).toBe(0);
  });

  // Why: a limited queue's permit request held the stream's credit; if the run it was for left meanwhile (a
  // cancel), the credit came free with no pump, and a run of the stream's other queue parked meanwhile stayed.
  it('credit held for a permit request that found its run gone goes to the stream\'s other queues', async () => {
    const { gate } = limitedQueue(4);
    let grant: () => void = () => undefined;
    const slowGate = { ...gate, acquire: (...a: Parameters<typeof gate.acquire>) => new Promise<true | 'shared' | 'in_flight' | 'rate'>((resolve) => (grant = () => void gate.acquire(...a).then(resolve))) };
    const hub = new DeliveryHub(undefined, undefined, Date.now, slowGate);
    const w = sink(1, ['q', 'u']);
    hub.register(w);
    hub.deliver(run(101, { queue: 'q' })); // its permit request holds the only credit
    hub.deliver(run(1, { queue: 'u' })); // parked: no credit
    expect(ids(w)).toEqual([]);
    expect(hub.cancel(101, 'test').parked?.id).toBe(101);
    grant();
    for (let i = 0; i < 100 && ids(w).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids(w)).toEqual([1]);
  });

  it('a limited queue beside a busy unlimited one on the same stream gets its share of the freed credit', async () => {
    const { gate } = limitedQueue(4);
    const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
    const w = sink(2, ['q', 'u']);
    hub.register(w);
    for (let i = 1; i <= 20; i++) hub.deliver(run(i, { queue: 'u' }));
    for (let i = 101; i <= 110; i++) hub.deliver(run(i, { queue: 'q' }));
    await new Promise((r) => setTimeout(r, 10));
    // The worker answers its oldest run, one at a time, 12 times.
    for (let k = 0; k < 12; k++) {
      const oldest = w.got.find((r) => hub.holds(w.id, r.id))!;
      hub.settle(w.id, oldest.id);
      await new Promise((r) => setTimeout(r, 5));
    }
    const limited = w.got.filter((r) => r.queue === 'q').length;
    expect(limited, `handed out: ${w.got.map((r) => r.queue).join('')}`).toBeGreaterThanOrEqual(4);
  });

  // Why: permits are keyed by run id. A copy of a run handed out here while another copy (after a shard move)
  // held the run's permit was granted that permit, and its settle gave it back: the other copy went uncounted,
  // and the queue over its limit.
  it("a run whose permit another copy holds is sent, and its settle leaves that permit alone", async () => {
    const { gate, permits, limit } = limitedQueue(2);
    const now = Date.now();
    expect(await permits.acquire('q', 1, limit, now, now + 60_000)).toBe(true); // the other copy's
    const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
    const w = sink(5);
    hub.register(w);
    hub.deliver(run(1));
    for (let i = 0; i < 100 && ids(w).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ids(w)).toEqual([1]);
    hub.settle(w.id, 1);
    await new Promise((r) => setTimeout(r, 10));
    expect(await permits.holders('q')).toEqual([1]); // still the other copy's (the sweeper frees it once the run is done)
  });

  it('credit freed on a stream of several queues goes to each queue in turn: one kept full does not starve the others', () => {
    const hub = new DeliveryHub();
    const w = sink(1, ['a', 'b']);
    hub.register(w);
    hub.deliver(run(1, { queue: 'a' }));
    for (const [id, queue] of [[2, 'a'], [3, 'a'], [4, 'b'], [5, 'a']] as const) hub.deliver(run(id, { queue }));
    for (const id of [1, 2, 4]) hub.settle(w.id, id);
    // Before: 1, 2, 3 — run 4 (queue b) waited until queue a was empty.
    expect(ids(w)).toEqual([1, 2, 4, 3]);
  });

  it('after a stream leaves, round robin continues over the rest', () => {
    const hub = new DeliveryHub();
    const [a, b, c] = [sink(10), sink(10), sink(10)];
    [a, b, c].forEach((s) => hub.register(s));
    [1, 2, 3].forEach((i) => hub.deliver(run(i)));
    hub.unregister(c.id);
    [4, 5, 6, 7].forEach((i) => hub.deliver(run(i)));
    expect(ids(a).length + ids(b).length).toBe(6);
    expect(Math.abs(ids(a).length - ids(b).length)).toBeLessThanOrEqual(1);
    expect(ids(c)).toEqual([3]);
  });

  it('a late answer for an older delivery does not free its redelivery’s credit', () => {
    const hub = new DeliveryHub();
    const w = sink(1);
    hub.register(w);
    hub.deliver(run(1, { deliveries: 1 }));
    hub.deliver(run(1, { deliveries: 2 })); // redelivered to the same stream
    hub.deliver(run(2));
    expect(hub.backlog).toBe(1);
    hub.settle(w.id, 1, { fence: 1, deliveries: 1 }); // the refused answer for delivery 1
    expect(hub.holds(w.id, 1)).toBe(true);
    expect(hub.backlog).toBe(1);
    hub.settle(w.id, 1, { fence: 1, deliveries: 2 });
    expect(ids(w)).toEqual([1, 1, 2]);
  });

  it('calls onSent for every run written to a stream', () => {
    const sent: number[] = [];
    const hub = new DeliveryHub((r) => sent.push(r.id));
    hub.deliver(run(1));
    expect(sent).toEqual([]);
    const w = sink(5);
    hub.register(w);
    hub.deliver(run(2));
    expect(sent).toEqual([1, 2]);
  });

  it('room is per queue: a full queue is held back by name, and its parked runs do not shrink the room of the others', () => {
    const hub = new DeliveryHub();
    const slow = sink(5, ['slow']);
    const fast = sink(100, ['fast']);
    hub.register(slow);
    hub.register(fast);
    // 2 × (5 + 100) = 210 < MIN_ROOM: the room starts at a thousand, for any queue.
    expect(hub.room()).toBe(1_000);
    for (let i = 1; i <= 5 + 600; i++) hub.deliver(run(i, { queue: 'slow' }));
    // 600 parked, short of slow's room of 1,000: they count.
    expect(hub.fullQueues()).toEqual([]);
    expect(hub.roomFor('slow')).toBe(400);
    expect(hub.room()).toBe(400);
    for (let i = 606; i <= 5 + 950; i++) hub.deliver(run(i, { queue: 'slow' }));
    // Nearly full: the shared room never falls below MIN_CLAIM_BATCH.
    expect(hub.room()).toBe(MIN_CLAIM_BATCH);
    for (let i = 956; i <= 5 + 1_000; i++) hub.deliver(run(i, { queue: 'slow' }));
    // Full: the claim holds slow back by name, and the others get the whole room again.
    expect(hub.fullQueues()).toEqual(['slow']);
    expect(hub.roomFor('slow')).toBe(0);
    expect(hub.room()).toBe(1_000);
    // fast has nothing waiting: its floor is a share of MIN_ROOM with slow's.
    expect(hub.roomFor('fast')).toBe(500);
    // As slow's worker answers, its room comes back a run at a time.
    hub.settle(slow.id, 1);
    expect(hub.fullQueues()).toEqual([]);
    expect(hub.roomFor('slow')).toBe(1);
  });

  it('a queue no stream takes is full at MIN_ROOM parked runs; a stream for every queue counts toward each queue', () => {
    const hub = new DeliveryHub();
    for (let i = 1; i <= 1_000; i++) hub.deliver(run(i, { queue: 'nobody' }));
    expect(hub.fullQueues()).toEqual(['nobody']);
    const all = sink(800, [ALL_QUEUES]);
    hub.register(all);
    // Its credit of 800 makes room for 1,600 of each queue.
    expect(hub.roomFor('nobody')).toBe(1_600 - 1_000);
    expect(hub.fullQueues()).toEqual([]);
  });

  it('a queue with streams of its own is not given the credit of a stream for every queue (pick() never sends it there)', () => {
    const hub = new DeliveryHub();
    hub.register(sink(5, ['a']));
    hub.register(sink(800, [ALL_QUEUES]));
    expect(hub.roomFor('a')).toBe(1_000);
    expect(hub.roomFor('b')).toBe(1_600);
  });

  it('however many queues back up, the floor parks MIN_ROOM runs in all', () => {
    const hub = new DeliveryHub();
    const streams = Array.from({ length: 100 }, (_, i) => sink(1, [`q${i}`]));
    for (const st of streams) hub.register(st);
    // Each stream takes one run; a queue then counts as full at its share of MIN_ROOM.
    let id = 1;
    for (let i = 0; i < 100; i++) for (let k = 0; k < 11; k++) hub.deliver(run(id++, { queue: `q${i}` }));
    expect(hub.fullQueues()).toHaveLength(100);
    expect(hub.backlog).toBe(1_000);
    expect(hub.roomFor('q0')).toBe(0);
  });

  describe('staging', () => {
    /** A sink whose worker holds runs `stageAheadMs` ahead; records each send with its hold. */
    function stager(credit: number, stageAheadMs: number, queues: string[] = ['q']) {
      const sent: { id: number; at: number; startInMs: number | undefined }[] = [];
      const id = nextId++;
      const s: WorkerSink = { id, workerId: `w${id}`, queues: new Set(queues), credit, stageAheadMs, send: (r, at, startInMs) => sent.push({ id: r.id, at, startInMs }) };
      return { s, sent };
    }

    it('hands a run to a stream that holds that far ahead, recorded as released at its due time, within the credit less a tenth kept for runs due now', () => {
      const hub = new DeliveryHub(undefined, undefined, () => 1_000);
      const { s, sent } = stager(3, 50);
      hub.register(s);
      expect(hub.stage(run(1, { due_at_ms: 1_040 }), 40)).toBe(true);
      expect(hub.stage(run(2, { due_at_ms: 1_045 }), 45)).toBe(true);
      // One slot (a tenth of the credit, at least one) stays for runs due now: the third waits (the caller keeps it until due).
      expect(hub.stage(run(3, { due_at_ms: 1_046 }), 46)).toBe(false);
      expect(sent).toEqual([
        { id: 1, at: 1_040, startInMs: 40 },
        { id: 2, at: 1_045, startInMs: 45 },
      ]);
      // A run due now takes that slot at once.
      hub.deliver(run(9, { due_at_ms: 990 }));
      expect(sent.map((x) => x.id)).toEqual([1, 2, 9]);
      expect(hub.holds(s.id, 1)).toBe(true);
      // The hand-off recorder writes the due time, once it has passed.
      expect(hub.takeUnrecorded(1_041).map((d) => [d.runId, d.sentAtMs]).filter(([id]) => id === 1)).toEqual([[1, 1_040]]);
      // Answers free the credit as for any delivery.
      hub.settle(s.id, 1);
      hub.settle(s.id, 9);
      expect(hub.stage(run(3, { due_at_ms: 1_046 }), 46)).toBe(true);
    });

    it('the runs kept for what is due now are at most 16, however large the credit', () => {
      const hub = new DeliveryHub();
      const { s, sent } = stager(1_000, 100);
      hub.register(s);
      for (let i = 1; i <= 1_000; i++) hub.stage(run(i), 30);
      expect(sent).toHaveLength(1_000 - 16);
    });

    it('a stream whose credit is one never stages (its one run is kept for what is due now)', () => {
      const hub = new DeliveryHub();
      const { s, sent } = stager(1, 100);
      hub.register(s);
      expect(hub.stage(run(1), 30)).toBe(false);
      expect(sent).toEqual([]);
    });

    it('not to a stream that holds less far ahead, nor to one that does not stage; picks one that does', () => {
      const hub = new DeliveryHub();
      const short = stager(10, 20);
      const none = stager(10, 0);
      hub.register(short.s);
      hub.register(none.s);
      expect(hub.stage(run(1), 30)).toBe(false);
      const long = stager(10, 100);
      hub.register(long.s);
      expect(hub.stage(run(1), 30)).toBe(true);
      expect(long.sent.map((x) => x.id)).toEqual([1]);
      expect(short.sent).toEqual([]);
      expect(none.sent).toEqual([]);
    });

    it('never an at-most-once run: a worker dying while it held one would lose it', () => {
      const hub = new DeliveryHub();
      const { s, sent } = stager(10, 100);
      hub.register(s);
      expect(hub.stage(run(1, { delivery: 'at_most_once' }), 30)).toBe(false);
      expect(sent).toEqual([]);
    });

    it('never for a limited queue: its permit is taken at the hand-out, which must be the start', () => {
      const { gate } = limitedQueue(5);
      const hub = new DeliveryHub(undefined, undefined, Date.now, gate);
      const { s, sent } = stager(10, 100);
      hub.register(s);
      expect(hub.stage(run(1), 30)).toBe(false);
      expect(hub.stage(run(2, { queue: 'other' }), 30)).toBe(false); // no stream takes 'other'
      expect(sent).toEqual([]);
    });

    it('a staged run can be cancelled like any in flight (its worker is told)', () => {
      const hub = new DeliveryHub();
      const told: number[] = [];
      const id = nextId++;
      hub.register({ id, workerId: 'w', queues: new Set(['q']), credit: 5, stageAheadMs: 100, send: () => {}, cancel: (d) => told.push(d.runId) });
      expect(hub.stage(run(7), 30)).toBe(true);
      expect(hub.cancel(7, 'cancelled')).toEqual({ told: true, parked: null });
      expect(told).toEqual([7]);
    });

    it('an older copy is replaced by a newer delivery of the run (a redelivery of a staged run)', () => {
      const hub = new DeliveryHub();
      const a = stager(5, 100);
      hub.register(a.s);
      expect(hub.stage(run(1, { deliveries: 1 }), 30)).toBe(true);
      // An older copy arriving late is refused.
      expect(hub.stage(run(1, { deliveries: 0 }), 30)).toBe(false);
      expect(hub.stage(run(1, { deliveries: 2 }), 30)).toBe(true);
      expect(a.sent.map((x) => x.id)).toEqual([1, 1]);
      expect(hub.inFlightOf('q')).toEqual([1]);
    });
  });
});
