/**
 * The authorisation table and the gate's decisions (pure): every RPC of the
 * API is named in the table, each role gets exactly its permissions, and
 * every way a credential can be missing, malformed, unknown or too weak
 * gets the right status.
 */
import { Metadata, status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { loadTimelaneProto } from '@timelane/client';
import { CREDENTIAL_HEADER, NAMESPACE_HEADER, PRINCIPAL_HEADER, ROLE_HEADER, decide, stillAdmitted } from '../../daemon/security/authorize.js';
import { hashToken, newToken, parseCredentials } from '../../daemon/security/credentials-file.js';
import { METHOD_PERMISSIONS, permissionOf, roleAllows } from '../../daemon/security/permissions.js';

const table = parseCredentials(
  JSON.stringify({
    tokens: [
      { name: 'ops', sha256: hashToken('admin-token'), role: 'admin' },
      { name: 'billing-api', sha256: hashToken('sched-token'), role: 'scheduler', namespace: 'billing' },
      { name: 'billing-worker', sha256: hashToken('work-token'), role: 'worker', namespace: 'billing' },
      { name: 'dashboards', sha256: hashToken('read-token'), role: 'reader', namespace: 'billing' },
    ],
    identities: [{ name: 'fraud-worker', subject: 'fraud-worker.internal', role: 'worker', namespace: 'fraud' }],
  }),
  'test',
);

const md = (token?: string): Metadata => {
  const m = new Metadata();
  if (token !== undefined) m.set('authorization', token);
  return m;
};

describe('permission table', () => {
  it('names every method of every timelane service (a new RPC must be placed)', () => {
    const { pkg } = loadTimelaneProto();
    const paths = [pkg.Scheduler, pkg.Worker, pkg.Admin, pkg.Workflows].flatMap((svc) => Object.values(svc.service).map((m) => m.path));
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) expect(Object.keys(METHOD_PERMISSIONS), p).toContain(p);
  });

  it('an unknown method needs admin', () => {
    expect(permissionOf('/timelane.v1.Scheduler/SomethingNew')).toBe('admin');
  });

  it('roles grant what the README says', () => {
    expect(roleAllows('scheduler', 'schedule')).toBe(true);
    expect(roleAllows('scheduler', 'read')).toBe(true);
    expect(roleAllows('scheduler', 'work')).toBe(false);
    expect(roleAllows('scheduler', 'admin')).toBe(false);
    expect(roleAllows('worker', 'work')).toBe(true);
    expect(roleAllows('worker', 'schedule')).toBe(false);
    expect(roleAllows('worker', 'read')).toBe(false);
    // Every role may list members: a worker discovers the daemons it streams from.
    for (const r of ['admin', 'scheduler', 'worker', 'reader'] as const) expect(roleAllows(r, permissionOf('/timelane.v1.Admin/ListMembers'))).toBe(true);
    expect(roleAllows('worker', permissionOf('/timelane.v1.Admin/ListShards'))).toBe(false);
    expect(roleAllows('reader', 'read')).toBe(true);
    expect(roleAllows('reader', 'schedule')).toBe(false);
    for (const p of ['public', 'members', 'read', 'schedule', 'work', 'admin'] as const) expect(roleAllows('admin', p)).toBe(true);
  });
});

describe('the gate', () => {
  const SCHEDULE = '/timelane.v1.Scheduler/Schedule';
  const MOVE = '/timelane.v1.Admin/MoveShard';
  const HEALTH = '/grpc.health.v1.Health/Check';

  it('open mode lets everything through as an admin', () => {
    const v = decide(MOVE, md(), undefined, null);
    expect(v).toMatchObject({ ok: true, principal: { role: 'admin', via: 'open' } });
  });

  it('no credential: UNAUTHENTICATED, except health checks', () => {
    expect(decide(SCHEDULE, md(), undefined, table)).toMatchObject({ ok: false, code: status.UNAUTHENTICATED });
    expect(decide(HEALTH, md(), undefined, table)).toMatchObject({ ok: true });
  });

  it('health checks pass whatever credential comes with them (was UNAUTHENTICATED for an unknown token or certificate)', () => {
    expect(decide(HEALTH, md('Bearer stale-token'), undefined, table)).toMatchObject({ ok: true });
    expect(decide(HEALTH, md('Basic abc'), undefined, table)).toMatchObject({ ok: true });
    expect(decide(HEALTH, md(), 'unlisted.internal', table)).toMatchObject({ ok: true });
  });

  it('malformed or unknown token: UNAUTHENTICATED, saying which', () => {
    expect(decide(SCHEDULE, md('Basic abc'), undefined, table)).toMatchObject({ ok: false, code: status.UNAUTHENTICATED, details: expect.stringMatching(/Bearer/) });
    expect(decide(SCHEDULE, md('Bearer nope'), undefined, table)).toMatchObject({ ok: false, code: status.UNAUTHENTICATED, details: expect.stringMatching(/unknown token/) });
  });

  it('a known token with too weak a role: PERMISSION_DENIED naming who, what and why', () => {
    const v = decide(MOVE, md('Bearer sched-token'), undefined, table);
    expect(v).toMatchObject({ ok: false, code: status.PERMISSION_DENIED });
    if (!v.ok) expect(v.details).toMatch(/billing-api.*scheduler.*MoveShard.*admin/);
    expect(decide(SCHEDULE, md('Bearer read-token'), undefined, table)).toMatchObject({ ok: false, code: status.PERMISSION_DENIED });
    expect(decide(SCHEDULE, md('Bearer work-token'), undefined, table)).toMatchObject({ ok: false, code: status.PERMISSION_DENIED });
  });

  it('a token with the right role passes, with its namespace', () => {
    expect(decide(SCHEDULE, md('Bearer sched-token'), undefined, table)).toMatchObject({ ok: true, principal: { name: 'billing-api', namespace: 'billing' } });
    expect(decide(MOVE, md('bearer admin-token'), undefined, table)).toMatchObject({ ok: true, principal: { name: 'ops', namespace: '*' } });
  });

  it('a client certificate is recognised by subject CN; an unlisted one is refused', () => {
    expect(decide('/timelane.v1.Worker/Work', md(), 'fraud-worker.internal', table)).toMatchObject({ ok: true, principal: { name: 'fraud-worker', via: 'certificate' } });
    expect(decide('/timelane.v1.Worker/Work', md(), 'someone-else', table)).toMatchObject({ ok: false, code: status.UNAUTHENTICATED });
  });

  it('a bearer token wins over the certificate (one identity per call)', () => {
    expect(decide(SCHEDULE, md('Bearer sched-token'), 'fraud-worker.internal', table)).toMatchObject({ ok: true, principal: { name: 'billing-api' } });
  });
});

describe('a stream is re-checked against the credential it was opened with', () => {
  /** The headers the gate sets on a call it let in. */
  const admitted = (path: string, auth: string | undefined, subject?: string): Metadata => {
    const v = decide(path, md(auth), subject, table);
    if (!v.ok) throw new Error('not admitted');
    const m = new Metadata();
    m.set(PRINCIPAL_HEADER, v.principal.name);
    m.set(ROLE_HEADER, v.principal.role);
    m.set(NAMESPACE_HEADER, v.principal.namespace);
    if (v.credential) m.set(CREDENTIAL_HEADER, v.credential);
    return m;
  };
  const withEntry = (worker: object, identities: object[] = []) =>
    parseCredentials(JSON.stringify({ tokens: [{ name: 'ops', sha256: hashToken('admin-token'), role: 'admin' }, worker], identities }), 'test');
  const WORK = '/timelane.v1.Worker/Work';

  it('still admitted while its token is in the file with the same name, role and namespace', () => {
    const m = admitted(WORK, 'Bearer work-token');
    expect(stillAdmitted(m, table)).toBe(true);
    expect(stillAdmitted(m, withEntry({ name: 'billing-worker', sha256: hashToken('work-token'), role: 'worker', namespace: 'billing' }))).toBe(true);
  });

  it('ended when its token is rotated out, though the name stays (before: kept, the name alone matched)', () => {
    const m = admitted(WORK, 'Bearer work-token');
    expect(stillAdmitted(m, withEntry({ name: 'billing-worker', sha256: hashToken('new-work-token'), role: 'worker', namespace: 'billing' }))).toBe(false);
  });

  it('ended when its token now names another role or namespace, or its certificate is gone', () => {
    const m = admitted(WORK, 'Bearer work-token');
    expect(stillAdmitted(m, withEntry({ name: 'billing-worker', sha256: hashToken('work-token'), role: 'worker', namespace: 'fraud' }))).toBe(false);
    const cert = admitted(WORK, undefined, 'fraud-worker.internal');
    expect(stillAdmitted(cert, table)).toBe(true);
    expect(stillAdmitted(cert, withEntry({ name: 'other', sha256: hashToken('x'), role: 'reader', namespace: 'fraud' }))).toBe(false);
  });
});

describe('credentials file', () => {
  it('never takes a token in clear, and names the bad entry and field', () => {
    expect(() => parseCredentials(JSON.stringify({ tokens: [{ name: 'x', sha256: 'my-secret', role: 'admin' }] }), 'f.json')).toThrow(/f\.json: tokens\[0\]\.sha256/);
    expect(() => parseCredentials(JSON.stringify({ tokens: [{ name: 'x', sha256: hashToken('a'), role: 'root' }] }), 'f.json')).toThrow(/tokens\[0\]\.role/);
    expect(() => parseCredentials(JSON.stringify({ tokens: [{ name: 'x', sha256: hashToken('a'), role: 'worker' }] }), 'f.json')).toThrow(/tokens\[0\]\.namespace/);
    expect(() =>
      parseCredentials(JSON.stringify({ tokens: [{ name: 'x', sha256: hashToken('a'), role: 'admin' }, { name: 'x', sha256: hashToken('b'), role: 'admin' }] }), 'f.json'),
    ).toThrow(/tokens\[1\]\.name: "x" is used twice/);
    expect(() => parseCredentials('{not json', 'f.json')).toThrow(/f\.json: not JSON/);
    // A copied entry whose hash was not changed: refused, not silently the later role.
    expect(() =>
      parseCredentials(JSON.stringify({ tokens: [{ name: 'ops', sha256: hashToken('t'), role: 'admin' }, { name: 'api', sha256: hashToken('t'), role: 'scheduler', namespace: 'b' }] }), 'f.json'),
    ).toThrow(/tokens\[1\]\.sha256: the same token as "ops"/);
  });

  it('new tokens are long, random and URL-safe', () => {
    const a = newToken();
    expect(a).toMatch(/^tl_[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(a);
  });
});

describe('TLS certificate files', () => {
  it('tells a self-signed certificate (its own trust anchor) from one a CA signed', async () => {
    const { makeTestCerts } = await import('../helpers/certs.js');
    const { isSelfSigned } = await import('../../daemon/security/tls.js');
    const certs = makeTestCerts();
    expect(isSelfSigned(certs.caCert)).toBe(true);
    // The web console trusted the certificate file itself: with this one every API call failed (503). The daemon now warns.
    expect(isSelfSigned(certs.serverCert)).toBe(false);
    expect(isSelfSigned('/nonexistent.crt')).toBe(false);
  });
});
