/**
 * The credentials file (`--auth-file`): who may call, with which role, in
 * which namespace. Bearer tokens are stored as SHA-256 hashes (the file never
 * holds a usable secret); mTLS identities by certificate subject CN.
 *
 *   { "tokens":     [{ "name": "billing-api", "sha256": "<hex>", "role": "scheduler", "namespace": "billing" }],
 *     "identities": [{ "name": "fraud-worker", "subject": "fraud-worker", "role": "worker", "namespace": "fraud" }] }
 *
 * Re-read while the daemon runs (watched-file.ts: a broken edit keeps the
 * previous table).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import { parseJsonFile, WatchedFile } from '../watched-file.js';
import { isRole, ROLES, type Role } from './permissions.js';

/** An authenticated caller. */
export interface Principal {
  name: string;
  role: Role;
  namespace: string;
  /** How it was recognised. */
  via: 'token' | 'certificate' | 'open';
}

export interface CredentialTable {
  byTokenHash: ReadonlyMap<string, Principal>;
  bySubject: ReadonlyMap<string, Principal>;
}

export const EMPTY_TABLE: CredentialTable = { byTokenHash: new Map(), bySubject: new Map() };

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new random bearer token (256 bits, URL-safe): `timelane token create`. */
export function newToken(): string {
  return `tl_${randomBytes(32).toString('base64url')}`;
}

const NAMESPACE_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** Parses and checks a credentials file's text; errors name the entry and field. */
export function parseCredentials(text: string, source: string): CredentialTable {
  const doc = parseJsonFile(text, source);
  if (typeof doc !== 'object' || doc === null) throw new Error(`${source}: must be an object with "tokens" and/or "identities"`);
  const d = doc as { tokens?: unknown; identities?: unknown };
  const byTokenHash = new Map<string, Principal>();
  const bySubject = new Map<string, Principal>();
  const names = new Set<string>();
  const entry = (e: unknown, where: string, key: 'sha256' | 'subject'): { principal: Principal; key: string } => {
    if (typeof e !== 'object' || e === null) throw new Error(`${where}: must be an object`);
    const o = e as Record<string, unknown>;
    if (typeof o.name !== 'string' || o.name === '') throw new Error(`${where}.name: required`);
    if (names.has(o.name)) throw new Error(`${where}.name: "${o.name}" is used twice`);
    names.add(o.name);
    if (!isRole(o.role)) throw new Error(`${where}.role: one of ${ROLES.join(', ')} (got ${JSON.stringify(o.role)})`);
    const namespace = o.namespace ?? (o.role === 'admin' ? '*' : undefined);
    if (typeof namespace !== 'string' || (namespace !== '*' && !NAMESPACE_RE.test(namespace)))
      throw new Error(`${where}.namespace: 1..64 chars of [A-Za-z0-9_.-], or "*" for every namespace (got ${JSON.stringify(o.namespace)})`);
    if (o.role === 'admin' && namespace !== '*') throw new Error(`${where}.namespace: an admin acts on the whole cluster (shards, members, limits): "*" or none`);
    const k = o[key];
    if (key === 'sha256' && (typeof k !== 'string' || !/^[0-9a-f]{64}$/.test(k)))
      throw new Error(`${where}.sha256: the token's SHA-256 as 64 lowercase hex digits (\`timelane token hash\`); never the token itself`);
    if (key === 'subject' && (typeof k !== 'string' || k === '')) throw new Error(`${where}.subject: the client certificate's subject CN`);
    return { principal: { name: o.name, role: o.role, namespace, via: key === 'sha256' ? 'token' : 'certificate' }, key: k as string };
  };
  if (d.tokens !== undefined) {
    if (!Array.isArray(d.tokens)) throw new Error(`${source}: "tokens" must be an array`);
    d.tokens.forEach((t, i) => {
      const { principal, key } = entry(t, `${source}: tokens[${i}]`, 'sha256');
      // One token, one identity: a copied entry whose hash was not changed must not silently win.
      if (byTokenHash.has(key)) throw new Error(`${source}: tokens[${i}].sha256: the same token as "${byTokenHash.get(key)!.name}"`);
      byTokenHash.set(key, principal);
    });
  }
  if (d.identities !== undefined) {
    if (!Array.isArray(d.identities)) throw new Error(`${source}: "identities" must be an array`);
    d.identities.forEach((t, i) => {
      const { principal, key } = entry(t, `${source}: identities[${i}]`, 'subject');
      if (bySubject.has(key)) throw new Error(`${source}: identities[${i}].subject: "${key}" is used twice`);
      bySubject.set(key, principal);
    });
  }
  return { byTokenHash, bySubject };
}

/** The credentials file, read at start (errors stop the daemon) and re-read when it changes. */
export function credentialsFile(path: string, log: Logger, pollMs: number): WatchedFile<CredentialTable> {
  return new WatchedFile(path, parseCredentials, 'credentials', log, pollMs);
}
