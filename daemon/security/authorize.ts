/**
 * The gRPC gate: every call is authenticated (bearer token, or the client
 * certificate's subject under mTLS) and authorised (its role must grant the
 * method's permission) before any handler runs. One server interceptor, so no
 * service can forget it; health checks stay public for probes.
 *
 * The caller's identity reaches handlers as metadata this gate sets (and
 * strips from what the client sent): `x-timelane-principal`, `-role`,
 * `-namespace`, and `-credential` (which token or certificate: revocation
 * and rotation end the streams it opened). Audit lines (`"audit": true`) record every refusal and every
 * admin call with its outcome.
 */
import { Metadata, ServerInterceptingCall, status, type ServerInterceptor } from '@grpc/grpc-js';
import type { Logger } from '../log.js';
import { hashToken, type CredentialTable, type Principal } from './credentials-file.js';
import { permissionOf, roleAllows, type Permission } from './permissions.js';

export const PRINCIPAL_HEADER = 'x-timelane-principal';
export const ROLE_HEADER = 'x-timelane-role';
export const NAMESPACE_HEADER = 'x-timelane-namespace';
/** Which credential let the call in: `token:<sha256>` or `cert:<subject>` (stillAdmitted looks it up again). */
export const CREDENTIAL_HEADER = 'x-timelane-credential';

/** Open mode (`timelane dev`, `--insecure`): every caller is an admin of every namespace. */
export const OPEN_PRINCIPAL: Principal = { name: 'anonymous', role: 'admin', namespace: '*', via: 'open' };

export interface GateOptions {
  /** The credentials in force (re-read on change); null: open mode. */
  credentials: (() => CredentialTable) | null;
  log: Logger;
}

type Verdict = { ok: true; principal: Principal; credential?: string } | { ok: false; code: status; details: string; principal?: Principal };

/** Decides one call: pure, so the unit tests can walk every case. */
export function decide(path: string, metadata: Metadata, peerSubject: string | undefined, table: CredentialTable | null): Verdict {
  const permission: Permission = permissionOf(path);
  if (table === null) return { ok: true, principal: OPEN_PRINCIPAL };
  // Health checks need no credential, whatever the caller sends (a probe holding a stale token still probes).
  if (permission === 'public') return { ok: true, principal: { name: 'anonymous', role: 'reader', namespace: '', via: 'open' } };
  const header = metadata.get('authorization')[0];
  let principal: Principal | undefined;
  let credential: string;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(String(header));
    if (!m) return { ok: false, code: status.UNAUTHENTICATED, details: 'authorization: expected "Bearer <token>"' };
    const hash = hashToken(m[1]);
    principal = table.byTokenHash.get(hash);
    if (!principal) return { ok: false, code: status.UNAUTHENTICATED, details: 'authorization: unknown token' };
    credential = `token:${hash}`;
  } else if (peerSubject !== undefined) {
    principal = table.bySubject.get(peerSubject);
    if (!principal) return { ok: false, code: status.UNAUTHENTICATED, details: `client certificate CN=${peerSubject} is not in the credentials file` };
    credential = `cert:${peerSubject}`;
  } else return { ok: false, code: status.UNAUTHENTICATED, details: 'no credential: send "authorization: Bearer <token>" or a client certificate' };
  if (!roleAllows(principal.role, permission))
    return { ok: false, code: status.PERMISSION_DENIED, details: `${principal.name} (role ${principal.role}) may not call ${shortName(path)}: it needs ${permission}`, principal };
  return { ok: true, principal, credential };
}

/**
 * Whether the credential a call was let in with (the headers this gate set)
 * is still in the credentials file, for the same name, role and namespace: a
 * stream outlives its first check, and a credential removed or rotated
 * meanwhile must end it. (Matching the name alone kept a stream opened with a
 * rotated-out token alive.)
 */
export function stillAdmitted(metadata: Metadata, table: CredentialTable | null): boolean {
  if (table === null) return true;
  const [name, role, namespace, credential] = [PRINCIPAL_HEADER, ROLE_HEADER, NAMESPACE_HEADER, CREDENTIAL_HEADER].map((h) => String(metadata.get(h)[0] ?? ''));
  const p = credential.startsWith('token:')
    ? table.byTokenHash.get(credential.slice('token:'.length))
    : credential.startsWith('cert:')
      ? table.bySubject.get(credential.slice('cert:'.length))
      : undefined;
  return p !== undefined && p.name === name && p.role === role && p.namespace === namespace;
}

export function authInterceptor(opts: GateOptions): ServerInterceptor {
  const audit = opts.log.child({ audit: true });
  return (method, call) => {
    const path = method.path;
    const adminCall = permissionOf(path) === 'admin';
    let who: Principal | undefined;
    return new ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, pass) => {
            const peerCert = call.getAuthContext()?.sslPeerCertificate;
            const subject = peerCert && typeof peerCert.subject?.CN === 'string' ? peerCert.subject.CN : undefined;
            const verdict = decide(path, metadata, subject, opts.credentials ? opts.credentials() : null);
            if (!verdict.ok) {
              audit.warn({ event: 'denied', method: path, peer: call.getPeer(), principal: verdict.principal?.name, code: status[verdict.code] }, verdict.details);
              call.sendStatus({ code: verdict.code, details: verdict.details, metadata: new Metadata() });
              return;
            }
            who = verdict.principal;
            for (const h of [PRINCIPAL_HEADER, ROLE_HEADER, NAMESPACE_HEADER, CREDENTIAL_HEADER]) metadata.remove(h);
            metadata.set(PRINCIPAL_HEADER, who.name);
            metadata.set(ROLE_HEADER, who.role);
            metadata.set(NAMESPACE_HEADER, who.namespace);
            if (verdict.credential) metadata.set(CREDENTIAL_HEADER, verdict.credential);
            pass(metadata);
          },
        });
      },
      sendStatus: (st, next) => {
        if (adminCall && who)
          audit.info({ event: 'admin', method: path, peer: call.getPeer(), principal: who.name, via: who.via, code: status[st.code ?? status.OK] }, `admin call ${shortName(path)}`);
        next(st);
      },
    });
  };
}

function shortName(path: string): string {
  return path.replace(/^\/[a-z0-9.]*\./, '');
}
