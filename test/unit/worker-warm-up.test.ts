/**
 * The worker's warm-up (clients/typescript/src/warm-up.ts): the first worker
 * of a process runs synthetic runs through its receiving path — decoded,
 * held and started, given a context, answered — once, and never a handler.
 */
import { describe, expect, it } from 'vitest';
import { createWorker } from '@timelane/client';
import { warmUpWorkerOnce } from '../../clients/typescript/src/warm-up.js';
import { RunAbort } from '../../clients/typescript/src/run-abort.js';

describe('warmUpWorkerOnce', () => {
  it('every synthetic run is decoded, held, started and given a context; a second call does nothing', () => {
    let contexts = 0;
    const context = (heartbeat: () => void, abort: RunAbort): unknown => {
      expect(abort).toBeInstanceOf(RunAbort);
      heartbeat(); // a no-op: nothing is sent
      contexts++;
      return {};
    };
    const first = warmUpWorkerOnce(1_234, context);
    // Every run came out of the holder (its wake): a run held and never started would be missing here.
    expect(first.runs).toBe(1_234);
    expect(contexts).toBe(1_234);
    expect(first.ms).toBeGreaterThan(0);
    // Once per process: the JIT's state is the process's.
    const again = warmUpWorkerOnce(5_000, context);
    expect(again).toBe(first);
    expect(contexts).toBe(1_234);
  });
});

describe('createWorker warmUpRuns', () => {
  it('refuses a count outside 0..1,000,000 or not whole, naming it', () => {
    for (const warmUpRuns of [-1, 1.5, 1_000_001, Number.NaN])
      expect(() => createWorker({ address: '127.0.0.1:1', queues: ['q'], warmUpRuns, handler: () => undefined }), String(warmUpRuns)).toThrow(/^warmUpRuns: must be an integer in 0\.\.1000000/);
    void createWorker({ address: '127.0.0.1:1', queues: ['q'], warmUpRuns: 0, handler: () => undefined }).close(0);
  });
});
