/**
 * Which storage errors mean "try again" (UNAVAILABLE, retried by answers and
 * by the claimer's miss checks), and which mean a connection must be dropped.
 */
import { describe, expect, it } from 'vitest';
import { isReadTimeout } from '../../daemon/db/pool.js';
import { mapStorageError } from '../../daemon/db/storage-errors.js';
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
