/** The pure parts of the ScheduleBatch write path: array literals and derived job ids. */
import { describe, expect, it } from 'vitest';
import { batchJobIds } from '../../daemon/scheduling/batch-key.js';
import { packBytes, plainArray, sharedPlainArray, sharedTextArray, textArray } from '../../daemon/scheduling/pg-arrays.js';

describe('array literals', () => {
  it('text[]: every element quoted, quotes and backslashes escaped, null as NULL', () => {
    expect(textArray(['a', 'NULL', 'b"c', 'd\\e', 'f,{g}', null, ''])).toBe('{"a","NULL","b\\"c","d\\\\e","f,{g}",NULL,""}');
    expect(textArray([])).toBe('{}');
  });

  it('numbers and UUIDs joined', () => {
    expect(plainArray([1, -2, 1760000000123])).toBe('{1,-2,1760000000123}');
  });

  it('a shared column is one element when all values agree, else one per row', () => {
    expect(sharedTextArray(['q', 'q', 'q'])).toBe('{"q"}');
    expect(sharedTextArray(['q', 'q', 'r'])).toBe('{"q","q","r"}');
    expect(sharedPlainArray([5, 5])).toBe('{5}');
    expect(sharedPlainArray([5, 6])).toBe('{5,6}');
  });

  it('payloads packed into one buffer with offsets and lengths', () => {
    const p = packBytes([Buffer.from('ab'), Buffer.alloc(0), Buffer.from('cde')]);
    expect(p.bytes.toString()).toBe('abcde');
    expect(p.offsets).toBe('{0,2,2}');
    expect(p.lengths).toBe('{2,0,3}');
    expect(packBytes([Buffer.alloc(0)]).bytes.length).toBe(0);
  });
});

describe('batchJobIds', () => {
  const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('is deterministic per (namespace, batch id, index), distinct within a batch, and a version-8 UUID', () => {
    const ids = batchJobIds('default', 'b-1', 1000);
    expect(ids).toEqual(batchJobIds('default', 'b-1', 1000));
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(id).toMatch(UUID_V8);
    expect(batchJobIds('default', 'b-1', 3)).toEqual(ids.slice(0, 3));
  });

  it('differs by namespace and by batch id (no ambiguity at the separator)', () => {
    const a = batchJobIds('default', 'b-1', 10);
    expect(new Set([...a, ...batchJobIds('other', 'b-1', 10), ...batchJobIds('default', 'b-2', 10)]).size).toBe(30);
    expect(batchJobIds('ab', 'c', 1)).not.toEqual(batchJobIds('a', 'bc', 1));
  });
});
