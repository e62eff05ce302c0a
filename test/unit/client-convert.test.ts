/**
 * The client library's conversion of inputs to wire messages: a field of the
 * wrong kind (a JSON file's typo, an untyped caller) is refused naming it,
 * never encoded as another value nor left to the encoder's unnamed error.
 */
import { describe, expect, it } from 'vitest';
import { scheduleRequest } from '../../clients/typescript/src/convert.js';
import { definitionToWire, startRequest } from '../../clients/typescript/src/workflow-convert.js';
import { createWorker, TimelaneClient, type ScheduleInput, type WorkflowDefinitionInput } from '@timelane/client';

/** An input as an untyped caller (or a parsed file) may give it. */
const loose = <T>(v: object): T => v as T;

describe('scheduleRequest', () => {
  it('a delivery mode other than the two names is refused, not sent as at_least_once', () => {
    for (const delivery of ['AT_MOST_ONCE', 'at-most-once', 'toString', 'bogus']) {
      expect(() => scheduleRequest(loose<ScheduleInput>({ queue: 'q', delivery })), delivery).toThrow(/^delivery: must be "at_least_once" or "at_most_once"/);
    }
    expect(scheduleRequest({ queue: 'q', delivery: 'at_most_once' }).delivery).toBe('AT_MOST_ONCE');
    expect(scheduleRequest({ queue: 'q' }).delivery).toBeUndefined();
  });

  it('a fractional or non-number priority, lease or retry field is refused, not truncated', () => {
    expect(() => scheduleRequest({ queue: 'q', priority: 1.5 })).toThrow(/^priority: must be a whole number from -2147483648 to 2147483647 \(got 1\.5\)/);
    expect(() => scheduleRequest(loose<ScheduleInput>({ queue: 'q', leaseMs: '30000' }))).toThrow(/^leaseMs: must be a whole number/);
    expect(() => scheduleRequest(loose<ScheduleInput>({ queue: 'q', retry: { maxAttempts: 'x' } }))).toThrow(/^retry\.maxAttempts: must be a whole number/);
    // Out of the wire type's range: the encoder wraps it (2^32 + 1 arrives as 1).
    expect(() => scheduleRequest({ queue: 'q', retry: { maxAttempts: 4_294_967_297 } })).toThrow(/^retry\.maxAttempts: must be a whole number from 0 to 4294967295/);
    expect(() => scheduleRequest({ queue: 'q', leaseMs: 4_294_968_296 })).toThrow(/^leaseMs: /);
    expect(() => scheduleRequest({ queue: 'q', priority: 4_294_967_297 })).toThrow(/^priority: /);
    expect(() => scheduleRequest({ queue: 'q', leaseMs: -1 })).toThrow(/^leaseMs: /);
    expect(scheduleRequest({ queue: 'q', priority: -3, leaseMs: 5_000, retry: { maxAttempts: 4 } })).toMatchObject({ priority: -3, leaseMs: 5_000, retry: { maxAttempts: 4 } });
  });
});

describe('definitionToWire', () => {
  const def = (step: object): WorkflowDefinitionInput => loose({ name: 'wf', steps: [{ name: 'a', queue: 'q' }, { name: 'b', queue: 'q', ...step }] });

  it('each step field of the wrong kind is refused naming the step and the field', () => {
    const cases: [object, RegExp][] = [
      [{ delivery: 'sometimes' }, /^steps\[1\]\.delivery: must be "at_least_once" or "at_most_once" \(got "sometimes"\)/],
      [{ delivery: 'AT_MOST_ONCE' }, /^steps\[1\]\.delivery: /],
      [{ after: 'a' }, /^steps\[1\]\.after: must be an array of step names \(got "a"\)/],
      [{ after: [1] }, /^steps\[1\]\.after: /],
      [{ priority: 1.5 }, /^steps\[1\]\.priority: must be a whole number/],
      [{ leaseMs: 'long' }, /^steps\[1\]\.leaseMs: must be a whole number/],
      [{ retry: { maxAttempts: 'x' } }, /^steps\[1\]\.retry\.maxAttempts: must be a whole number/],
      [{ name: 7 }, /^steps\[1\]\.name: must be a string/],
      [{ queue: undefined }, /^steps\[1\]\.queue: must be a string \(got nothing\)/],
    ];
    for (const [step, message] of cases) expect(() => definitionToWire(def(step)), JSON.stringify(step)).toThrow(message);
    expect(() => definitionToWire(loose({ name: 'wf', maxInFlight: 2.5, steps: [] }))).toThrow(/^maxInFlight: must be a whole number/);
    expect(() => definitionToWire(loose({ name: 'wf', steps: [null] }))).toThrow(/^steps\[0\]: must be an object/);
  });

  it('a start whose version or max_in_flight would wrap is refused', () => {
    expect(() => startRequest({ workflow: 'wf', version: 4_294_967_297 })).toThrow(/^version: /);
    expect(() => startRequest({ workflow: 'wf', maxInFlight: 4_294_967_297 })).toThrow(/^maxInFlight: /);
    expect(startRequest({ workflow: 'wf', version: 3, maxInFlight: 2 })).toMatchObject({ ref: { name: 'wf', version: 3 }, maxInFlight: 2 });
  });

  it('a well-formed step converts as written', () => {
    const wire = definitionToWire(def({ after: ['a'], delivery: 'at_most_once', priority: 2, leaseMs: 1_000, retry: { maxAttempts: 3 } }));
    expect(wire.steps?.[1]).toMatchObject({ name: 'b', after: ['a'], delivery: 'AT_MOST_ONCE', priority: 2, leaseMs: 1_000, retry: { maxAttempts: 3 } });
    expect(wire.steps?.[0]).toMatchObject({ after: [], delivery: 'AT_LEAST_ONCE', priority: 0, leaseMs: 0, retry: null });
  });
});

describe('TimelaneClient', () => {
  // Why: a shard of 2^32 + 15 reached the daemon as shard 15, and `ops move` moved that one.
  it('refuses a shard, page size or priority its wire field would wrap, before any call', async () => {
    const client = new TimelaneClient('127.0.0.1:1'); // nothing listens: a call made would fail UNAVAILABLE, not RangeError
    try {
      await expect(client.moveShard(4_294_967_311, 'm2')).rejects.toThrow(/^shard: must be a whole number from 0 to 4294967295 \(got 4294967311\)/);
      await expect(client.moveShard(undefined as unknown as number, 'm2')).rejects.toThrow(/^shard: is required/); // not shard 0
      await expect(client.setQueueLimits({ queue: 'q', maxPerSecond: 5 } as unknown as Parameters<TimelaneClient['setQueueLimits']>[0])).rejects.toThrow(/^maxInFlight: is required/);
      await expect(client.listRuns({ pageSize: 4_294_967_297 })).rejects.toThrow(/^pageSize: /);
      await expect(client.listRuns({ pageSize: -1 })).rejects.toThrow(/^pageSize: /);
      // An invalid instant is 0 on the wire, which means "no bound": a bounded replay replayed every dead run.
      await expect(client.listDeadRuns({ queue: 'q', since: new Date('not a date') })).rejects.toThrow(/^since: must be a valid instant/);
      await expect(client.replayRuns({ filter: { queue: 'q', until: Number.NaN } })).rejects.toThrow(/^until: must be a valid instant/);
      await expect(client.listDeadRuns({ since: '2026-11-01T00:00:00Z' as unknown as Date })).rejects.toThrow(/^since: /);
      // Ids and a filter: the filter was dropped without a word.
      await expect(client.replayRuns({ runIds: ['1'], filter: { queue: 'q' } } as unknown as Parameters<TimelaneClient['replayRuns']>[0])).rejects.toThrow(/^runIds, filter: give exactly one/);
      await expect(client.updateJob('00000000-0000-4000-8000-000000000000', { priority: 2 ** 31 })).rejects.toThrow(/^priority: /);
    } finally {
      client.close();
    }
  });
});

describe('createWorker', () => {
  // Why: the daemon refuses such a subscription, and the worker reconnected to it for ever (`timelane worker --queue 'a b'` hung).
  it('refuses a queue name the daemon would refuse, before connecting', () => {
    const worker = (queues: string[]) => createWorker({ address: '127.0.0.1:1', queues, handler: () => undefined });
    for (const q of ['a b', '', 'x'.repeat(129), '*', 'billing/', 'bad ns/q', 'timelane:workflow-start'])
      expect(() => worker(['ok', q]), q).toThrow(/^queues\[1\]: /);
    expect(() => worker(Array.from({ length: 65 }, (_, i) => `q${i}`))).toThrow(/^queues: give 1\.\.64 queues/);
    // So is a worker id the daemon refuses (it reconnected for ever, handling nothing).
    for (const workerId of ['x'.repeat(129), 'a\u0000b'])
      expect(() => createWorker({ address: '127.0.0.1:1', queues: ['ok'], workerId, handler: () => undefined })).toThrow(/^workerId: /);
    // What the daemon takes: a plain name, and (an admin's) namespace/queue.
    for (const q of ['orders', 'billing/invoices', 'a.b:c-d_e']) void worker([q]).close(0);
  });
});

describe('tuneJitForLatency', () => {
  it('refuses a budget outside 100..10,000,000 or not whole, naming it', async () => {
    const { tuneJitForLatency } = await import('@timelane/client');
    for (const bad of [50, 1.5, 20_000_000, Number.NaN]) expect(() => tuneJitForLatency(bad)).toThrow(/^budget: must be an integer in 100\.\.10000000/);
  });
});
