/**
 * Throwaway certificates for TLS tests, made with the openssl CLI in a temp
 * directory: a CA, server certificates for 127.0.0.1/localhost (two, for the
 * reload test) and client certificates, all signed by that CA, plus one
 * client certificate from a CA the daemon does not trust.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** A second server certificate (CN server-2), for reloads. */
  server2Cert: string;
  server2Key: string;
  /** A server certificate with no extended key usage (CN server-any): good as a client's too, as many CA-issued ones are. */
  serverAnyCert: string;
  serverAnyKey: string;
  /** Client certificate (CN as given) signed by the CA. */
  client(cn: string): { cert: string; key: string };
  /** A client certificate signed by another CA. */
  rogue: { cert: string; key: string };
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`], dir);
}

function signed(dir: string, ca: string, name: string, cn: string, ext: string): void {
  writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`], dir);
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'timelane-certs-'));
  const SERVER_EXT = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';
  const CLIENT_EXT = 'extendedKeyUsage=clientAuth\n';
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  signed(dir, 'ca', 'server', 'server-1', SERVER_EXT);
  signed(dir, 'ca', 'server2', 'server-2', SERVER_EXT);
  signed(dir, 'ca', 'server-any', 'server-any', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  signed(dir, 'other-ca', 'rogue', 'rogue-client', CLIENT_EXT);
  const p = (f: string): string => path.join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    server2Cert: p('server2.crt'),
    server2Key: p('server2.key'),
    serverAnyCert: p('server-any.crt'),
    serverAnyKey: p('server-any.key'),
    client(cn) {
      const name = `client-${cn.replace(/[^A-Za-z0-9.-]/g, '_')}`;
      signed(dir, 'ca', name, cn, CLIENT_EXT);
      return { cert: p(`${name}.crt`), key: p(`${name}.key`) };
    },
    rogue: { cert: p('rogue.crt'), key: p('rogue.key') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
