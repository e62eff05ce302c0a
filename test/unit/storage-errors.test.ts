/**
 * Which storage errors mean "try again" (UNAVAILABLE, retried by answers and
 * by the claimer's miss checks), which mean a connection must be dropped, and
 * which must not be tried again at once (a lock wait past the answer pool's
 * lock_timeout: it would only wait again).
 */
import { describe, expect, it } from 'vitest';
import { isReadTimeout } from '../../daemon/db/pool.js';
import { isLockTimeout, mapStorageError } from '../../daemon/db/storage-errors.js';
import { retryIfUnavailable } from '../../daemon/dispatch/answers.js';
import { TimelaneError } from '../../daemon/errors.js';

const kindOf = (err: unknown): string | undefined => {
  const mapped = mapStorageError(err);
  return mapped instanceof TimelaneError ? mapped.kind : undefined;
};

describe('mapStorageError', () => {
  it('a statement cancelled by statement_timeout (57014) and a read timeout are unavailable; a constraint violation is not', () => {
    expect(kindOf(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe('unavailable');
    expect(kindOf(new Error('Query read timeout'))).toBe('unavailable');
    expect(kindOf(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe('unavailable');
    expect(kindOf(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }))).toBeUndefined();
  });
});

describe('isReadTimeout', () => {
  it('knows a read timeout, also once mapped to UNAVAILABLE, and nothing else', () => {
    const raw = new Error('Query read timeout');
    expect(isReadTimeout(raw)).toBe(true);
    expect(isReadTimeout(mapStorageError(raw))).toBe(true);
    expect(isReadTimeout(mapStorageError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })))).toBe(false);
    expect(isReadTimeout(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isReadTimeout(undefined)).toBe(false);
    expect(isReadTimeout('Query read timeout')).toBe(false);
  });
});

const lockTimeout = (): Error => Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });

describe('lock timeouts (55P03)', () => {
  it('are unavailable, say a lock is held, and are known as lock timeouts also once mapped; nothing else is', () => {
    const mapped = mapStorageError(lockTimeout());
    expect(mapped instanceof TimelaneError && mapped.kind).toBe('unavailable');
    expect(mapped.message).toMatch(/a lock it needs is held by another transaction.*send it again/);
    expect(isLockTimeout(lockTimeout())).toBe(true);
    expect(isLockTimeout(mapped)).toBe(true);
    expect(isLockTimeout(mapStorageError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })))).toBe(false);
    expect(isLockTimeout(undefined)).toBe(false);
  });

  it("an answer's statement is tried three times when Postgres was unavailable, once when a lock wait ran out", async () => {
    const tries = async (err: () => Error): Promise<{ calls: number; kind: string | undefined }> => {
      let calls = 0;
      const out = await retryIfUnavailable(async () => {
        calls++;
        throw mapStorageError(err());
      }).catch((e: unknown) => e);
      return { calls, kind: out instanceof TimelaneError ? out.kind : undefined };
    };
    expect(await tries(() => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toEqual({ calls: 3, kind: 'unavailable' });
    expect(await tries(lockTimeout)).toEqual({ calls: 1, kind: 'unavailable' });
  });
});
