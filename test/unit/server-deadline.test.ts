/** The server's own deadline for unary calls: first answer wins, exactly one answer. */
import { status, type ServerUnaryCall } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withServerDeadline } from '../../daemon/grpc/server-deadline.js';

const call = (cancelled = false) => ({ cancelled }) as unknown as ServerUnaryCall<unknown, string>;

describe('withServerDeadline', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a slow handler is answered DEADLINE_EXCEEDED, and its late answer is dropped', () => {
    const answers: unknown[] = [];
    const cb = withServerDeadline(call(), (err, v) => answers.push(err ? (err as { code: number }).code : v), 1_000);
    vi.advanceTimersByTime(999);
    expect(answers).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(answers).toEqual([status.DEADLINE_EXCEEDED]);
    cb(null, 'late');
    expect(answers).toEqual([status.DEADLINE_EXCEEDED]);
  });

  it('a handler in time answers, and the deadline stays silent', () => {
    const answers: unknown[] = [];
    const cb = withServerDeadline(call(), (err, v) => answers.push(err ?? v), 1_000);
    cb(null, 'ok');
    vi.advanceTimersByTime(5_000);
    expect(answers).toEqual(['ok']);
  });

  it('a call the client already gave up on gets no deadline answer', () => {
    const answers: unknown[] = [];
    withServerDeadline(call(true), (err, v) => answers.push(err ?? v), 1_000);
    vi.advanceTimersByTime(2_000);
    expect(answers).toEqual([]);
  });
});
