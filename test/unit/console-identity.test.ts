/**
 * The web console's client certificate under mTLS (consoleClientIdentity):
 * never the daemon's own key pair — compared by public key, so another copy
 * of the files (a full chain, CRLF line endings) is still recognised — and a
 * half-given pair is refused naming the missing variable.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClientIdentity } from '../../console/server/grpc-credentials.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';

let certs: TestCerts;

beforeAll(() => {
  certs = makeTestCerts();
});

afterAll(() => certs?.remove());

describe('consoleClientIdentity', () => {
  it("never presents the daemon's own key pair, whatever copy of its files the CLI's names point to", () => {
    const crlfKey = path.join(certs.dir, 'own-crlf.key');
    writeFileSync(crlfKey, readFileSync(certs.serverAnyKey, 'utf8').replace(/\n/g, '\r\n'));
    const fullChain = path.join(certs.dir, 'own-fullchain.crt');
    writeFileSync(fullChain, readFileSync(certs.serverAnyCert, 'utf8') + readFileSync(certs.caCert, 'utf8'));
    expect(consoleClientIdentity({ TIMELANE_TLS_CERT: certs.serverAnyCert, TIMELANE_TLS_KEY: certs.serverAnyKey }, certs.serverAnyKey)).toEqual({});
    expect(consoleClientIdentity({ TIMELANE_TLS_CERT: fullChain, TIMELANE_TLS_KEY: crlfKey }, certs.serverAnyKey)).toEqual({});
  });

  it("presents the console's own pair, or the CLI's when it is another identity", () => {
    const c = certs.client('console');
    expect(consoleClientIdentity({ TIMELANE_CONSOLE_TLS_CERT: c.cert, TIMELANE_CONSOLE_TLS_KEY: c.key, TIMELANE_TLS_CERT: certs.serverAnyCert }, certs.serverAnyKey)).toEqual({ certFile: c.cert, keyFile: c.key });
    expect(consoleClientIdentity({ TIMELANE_TLS_CERT: c.cert, TIMELANE_TLS_KEY: c.key }, certs.serverAnyKey)).toEqual({ certFile: c.cert, keyFile: c.key });
    expect(consoleClientIdentity({}, certs.serverAnyKey)).toEqual({});
  });

  it('refuses half a pair, naming what is missing', () => {
    const c = certs.client('half');
    expect(() => consoleClientIdentity({ TIMELANE_CONSOLE_TLS_CERT: c.cert }, null)).toThrow(/TIMELANE_CONSOLE_TLS_KEY is not set/);
    expect(() => consoleClientIdentity({ TIMELANE_TLS_KEY: c.key }, null)).toThrow(/TIMELANE_TLS_CERT is not set/);
  });
});
