/**
 * Checks for the JSON API's inputs: query parameters and JSON body fields.
 * Each reader returns a typed value or throws BadRequest naming the
 * parameter and the rule it broke, so a bad request is a 400 that says what
 * to fix, never a 500 or a silently ignored filter.
 */
import { BadRequest } from './http-errors.js';

/** A query string or a parsed JSON body, read field by field. */
export type Fields = URLSearchParams | Record<string, unknown>;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUN_ID_RE = /^[1-9][0-9]{0,15}$/;
/** A queue as the API names it: `queue`, or `ns/queue` (a namespaced queue, as callers of every namespace see it). */
const QUEUE_RE = /^(?:[A-Za-z0-9_.-]{1,64}\/)?[A-Za-z0-9_.:-]{1,128}$/;
const MEMBER_RE = /^[A-Za-z0-9_.-]{1,64}$/;

function raw(fields: Fields, name: string): unknown {
  if (fields instanceof URLSearchParams) {
    const all = fields.getAll(name);
    if (all.length > 1) throw new BadRequest(name, 'given more than once');
    return all.length === 0 || all[0] === '' ? undefined : all[0];
  }
  const v = fields[name];
  return v === null || v === '' ? undefined : v;
}

function text(fields: Fields, name: string): string | undefined {
  const v = raw(fields, name);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequest(name, 'must be a string');
  return v;
}

export function optionalString(fields: Fields, name: string, maxLength = 1024): string | undefined {
  const v = text(fields, name);
  if (v !== undefined && v.length > maxLength) throw new BadRequest(name, `must be at most ${maxLength} characters`);
  return v;
}

export function optionalJobId(fields: Fields, name: string): string | undefined {
  const v = text(fields, name);
  if (v !== undefined && !UUID_RE.test(v)) throw new BadRequest(name, `must be a job id (a UUID), got "${v.slice(0, 64)}"`);
  return v;
}

export function jobId(value: string, name = 'job id'): string {
  if (!UUID_RE.test(value)) throw new BadRequest(name, `must be a UUID, got "${value.slice(0, 64)}"`);
  return value;
}

export function optionalRunId(fields: Fields, name: string): string | undefined {
  const v = text(fields, name);
  if (v !== undefined) runId(v, name);
  return v;
}

export function runId(value: string, name = 'run id'): string {
  if (!RUN_ID_RE.test(value)) throw new BadRequest(name, `must be a positive integer, got "${value.slice(0, 64)}"`);
  return value;
}

export function optionalQueue(fields: Fields, name: string): string | undefined {
  const v = text(fields, name);
  if (v !== undefined && !QUEUE_RE.test(v)) throw new BadRequest(name, 'must be 1..128 characters of [A-Za-z0-9_.:-], optionally after "namespace/"');
  return v;
}

export function memberId(value: string, name = 'member'): string {
  if (!MEMBER_RE.test(value)) throw new BadRequest(name, 'must be 1..64 characters of [A-Za-z0-9_.-]');
  return value;
}

export function optionalInt(fields: Fields, name: string, lo: number, hi: number): number | undefined {
  const v = raw(fields, name);
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < lo || n > hi) throw new BadRequest(name, `must be an integer in ${lo}..${hi}, got ${JSON.stringify(v)}`);
  return n;
}

export function optionalBool(fields: Fields, name: string): boolean | undefined {
  const v = raw(fields, name);
  if (v === undefined) return undefined;
  if (v === true || v === 'true' || v === '1') return true;
  if (v === false || v === 'false' || v === '0') return false;
  throw new BadRequest(name, `must be true or false, got ${JSON.stringify(v)}`);
}

export function optionalEnum<T extends string>(fields: Fields, name: string, allowed: readonly T[]): T | undefined {
  const v = text(fields, name);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw new BadRequest(name, `must be one of ${allowed.join(', ')}, got "${v.slice(0, 64)}"`);
  return v as T;
}

/** An instant as epoch milliseconds or an ISO-8601 string; returns epoch ms. */
export function optionalInstant(fields: Fields, name: string): number | undefined {
  const v = raw(fields, name);
  if (v === undefined) return undefined;
  const ms = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms) || ms < 0) throw new BadRequest(name, `must be an ISO-8601 instant or epoch milliseconds, got ${JSON.stringify(v)}`);
  return ms;
}

/** A list of run ids (JSON body): 1..max entries. */
export function runIdList(fields: Fields, name: string, max: number): string[] {
  const v = fields instanceof URLSearchParams ? fields.getAll(name) : fields[name];
  if (!Array.isArray(v) || v.length === 0 || v.length > max) throw new BadRequest(name, `must be a list of 1..${max} run ids`);
  return v.map((id, i) => {
    if (typeof id !== 'string') throw new BadRequest(`${name}[${i}]`, 'must be a string');
    return runId(id, `${name}[${i}]`);
  });
}

/** Rejects query parameters the endpoint does not know (a typo would otherwise silently widen a search). */
export function onlyKnown(query: URLSearchParams, known: readonly string[]): void {
  for (const key of query.keys()) if (!known.includes(key)) throw new BadRequest(key, `unknown parameter (known: ${known.join(', ') || 'none'})`);
}
