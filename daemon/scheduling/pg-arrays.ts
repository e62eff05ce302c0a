/**
 * Array parameters for `unnest`, built as Postgres array literals in one pass.
 *
 * node-postgres serialises a JS array element by element (escaping and
 * quoting each in JS), and a `Buffer[]` as hex text inside the literal — twice
 * the payload's size, encoded by us and decoded again by Postgres. A batch
 * insert passes a dozen arrays of 1000 elements, so we build the literals
 * ourselves (numbers joined, strings quoted and escaped only when they need
 * it) and pass all payloads as ONE binary `bytea` with offsets and lengths.
 * Columns that hold the same value for every row (most of them, in most
 * batches) can go as a single element.
 */

const NEEDS_ESCAPE = /["\\]/;
const ESCAPES = /["\\]/g;

/** A `text[]` literal: every element double-quoted (so "NULL" stays a string); null → NULL. */
export function textArray(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null) out += 'NULL';
    else out += NEEDS_ESCAPE.test(v) ? `"${v.replace(ESCAPES, '\\$&')}"` : `"${v}"`;
  }
  return out + '}';
}

/** An integer array literal (`int[]`, `int8[]`); also fine for `uuid[]` of canonical UUID strings. */
export function plainArray(values: readonly (number | string)[]): string {
  return `{${values.join(',')}}`;
}

/** Like plainArray, with null elements (NULL). */
export function nullablePlainArray(values: readonly (number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    out += v === null ? 'NULL' : String(v);
  }
  return out + '}';
}

/** Index of the first value that differs from values[0]; values.length when all are equal. */
function firstDiff<T>(values: readonly T[]): number {
  const v0 = values[0];
  let k = 1;
  while (k < values.length && values[k] === v0) k++;
  return k;
}

/**
 * A `text[]` literal for a column given per row or once for all: a single
 * element when every value is the same (the statement then uses it for every
 * row; see insertJobs), else one per row.
 */
export function sharedTextArray(values: readonly string[]): string {
  return values.length > 0 && firstDiff(values) === values.length ? textArray([values[0]]) : textArray(values);
}

/** Like sharedTextArray, for numbers. */
export function sharedPlainArray(values: readonly number[]): string {
  return values.length > 0 && firstDiff(values) === values.length ? `{${values[0]}}` : plainArray(values);
}

/** Payloads as one binary `bytea` plus `int[]` offsets and lengths (0-based) into it. */
export interface PackedBytes {
  bytes: Buffer;
  offsets: string;
  lengths: string;
}

export function packBytes(values: readonly Buffer[]): PackedBytes {
  const offsets = new Array<number>(values.length);
  const lengths = new Array<number>(values.length);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    offsets[i] = total;
    lengths[i] = values[i].length;
    total += values[i].length;
  }
  return { bytes: total === 0 ? EMPTY : Buffer.concat(values as Buffer[], total), offsets: plainArray(offsets), lengths: plainArray(lengths) };
}

const EMPTY = Buffer.alloc(0);
