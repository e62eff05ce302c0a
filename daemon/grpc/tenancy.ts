/**
 * Namespaces that isolate. A caller whose credential is bound to namespace
 * `ns` (the security gate puts it in the call's metadata) sees and touches
 * only the jobs of `ns`, and its queues are its own: queue `invoices` of a
 * caller in `billing` is stored as `billing/invoices` (`/` cannot appear in a
 * queue name a client sends, so no one can name another namespace's queue),
 * and the prefix is taken off again in every answer. A caller of every
 * namespace (admin, open mode) sees stored names as they are.
 *
 * Someone else's job or run answers NOT_FOUND, as if it did not exist: its
 * existence is not revealed.
 */
import type { Metadata } from '@grpc/grpc-js';
import { notFound, permissionDenied } from '../errors.js';
import { NAMESPACE_HEADER } from '../security/authorize.js';
import { queueName, queueRef } from './validate.js';

/** The caller's namespace; null: every namespace. */
export type Tenant = string | null;

export function tenantOf(call: { metadata: Metadata }): Tenant {
  const ns = call.metadata.get(NAMESPACE_HEADER)[0];
  return ns === undefined || ns === '*' || ns === '' ? null : String(ns);
}

/** The namespace a write goes to: the caller's own (a request naming another is refused). */
export function writeNamespace(t: Tenant, requested: string, field: string): string {
  if (t === null) return requested;
  if (requested !== '' && requested !== 'default' && requested !== t) throw permissionDenied(`${field}: this credential is bound to namespace "${t}" (got "${requested}")`);
  return t;
}

/** A filter on namespace: the caller's own, or as asked when it may see every namespace. */
export function readNamespace(t: Tenant, requested: string | null, field: string): string | null {
  if (t === null) return requested;
  if (requested !== null && requested !== t) throw permissionDenied(`${field}: this credential is bound to namespace "${t}" (got "${requested}")`);
  return t;
}

/** A queue named in a request: a namespaced caller's own (plain names only); anyone else may name `ns/queue` too. */
export function callerQueue(t: Tenant, field: string, raw: string): string {
  return t === null ? queueRef(field, raw) : qualifyQueue(t, queueName(field, raw));
}

export function qualifyQueue(t: Tenant, queue: string): string {
  return t === null ? queue : `${t}/${queue}`;
}

export function unqualifyQueue(t: Tenant, queue: string): string {
  return t !== null && queue.startsWith(`${t}/`) ? queue.slice(t.length + 1) : queue;
}

/** Refuses (as not found) a job of another namespace. */
export function ownJob<J extends { namespace: string }>(t: Tenant, job: J, what: string): J {
  if (t !== null && job.namespace !== t) throw notFound(what);
  return job;
}

/** Takes the caller's queue prefix off every `queue` field of an answer (any depth). */
export function unqualifyAnswer<T>(t: Tenant, answer: T): T {
  if (t === null) return answer;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      const o = v as Record<string, unknown>;
      for (const [k, x] of Object.entries(o)) {
        if (k === 'queue' && typeof x === 'string') o[k] = unqualifyQueue(t, x);
        else walk(x);
      }
    }
  };
  walk(answer);
  return answer;
}
