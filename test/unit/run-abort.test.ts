/**
 * A handler's abort signal is made only when the handler reads it, and agrees
 * with every abort whenever it is read (clients/typescript/src/run-abort.ts).
 */
import { describe, expect, it } from 'vitest';
import { RunAbort } from '../../clients/typescript/src/run-abort.js';
import { handlerContext } from '../../clients/typescript/src/worker-session.js';

describe('RunAbort', () => {
  it('a signal read before the abort fires on it, with the reason', () => {
    const a = new RunAbort();
    const signal = a.signal;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    expect(signal.aborted).toBe(false);
    const why = new Error('cancelled');
    a.abort(why);
    expect(signal.aborted).toBe(true);
    expect(seen).toEqual([why]);
    expect(a.reason).toBe(why);
  });

  it('a signal first read after the abort is already aborted, with the same reason', () => {
    const a = new RunAbort();
    const why = new Error('superseded');
    a.abort(why);
    expect(a.reason).toBe(why);
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBe(why);
  });

  it('the first reason wins, read before or after', () => {
    const early = new RunAbort();
    const signal = early.signal;
    early.abort('first');
    early.abort('second');
    expect(signal.reason).toBe('first');
    expect(early.reason).toBe('first');

    const late = new RunAbort();
    late.abort('first');
    late.abort('second');
    expect(late.signal.reason).toBe('first');
  });

  it('one signal per run, and none until it is read', () => {
    const a = new RunAbort();
    expect(a.reason).toBeUndefined();
    expect((a as unknown as { controller: unknown }).controller).toBeUndefined();
    expect(a.signal).toBe(a.signal);
  });
});

describe('handlerContext', () => {
  it('a handler may assign its own signal and reads it back (a getter alone threw in strict code)', () => {
    const abort = new RunAbort();
    const ctx = handlerContext(() => undefined, abort);
    const mine = AbortSignal.any([ctx.signal, AbortSignal.timeout(60_000)]);
    ctx.signal = mine;
    expect(ctx.signal).toBe(mine);
    // The run's own abort still reaches a signal combined from it.
    abort.abort(new Error('cancelled'));
    expect(mine.aborted).toBe(true);
    expect({ ...ctx }.signal).toBe(mine);
  });

  it('unread, the signal is not made; read, it is the run abort signal', () => {
    const abort = new RunAbort();
    const ctx = handlerContext(() => undefined, abort);
    expect((abort as unknown as { controller: unknown }).controller).toBeUndefined();
    expect(ctx.signal).toBe(abort.signal);
  });
});
