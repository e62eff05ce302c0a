/**
 * TLS for the daemon's listeners, from PEM files that are re-read while it
 * runs (a renewed certificate is picked up without a restart):
 * - gRPC through grpc-js's file-watching certificate provider;
 * - HTTP listeners (metrics) by re-reading the files on the same period and
 *   swapping the server's secure context.
 * With a client CA the gRPC port requires client certificates signed by it (mTLS).
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { experimental, ServerCredentials } from '@grpc/grpc-js';
import type { Server as HttpsServer } from 'node:https';
import type { Logger } from '../log.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** Set: clients must present a certificate signed by this CA (mTLS). */
  clientCaFile: string | null;
  reloadMs: number;
}

/** Reads and checks the files now, so a wrong path or a key that does not match fails the start with a clear message. */
export function readTlsFiles(t: TlsFiles): SecureContextOptions {
  const read = (file: string, flag: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  };
  const opts: SecureContextOptions = { cert: read(t.certFile, '--tls-cert'), key: read(t.keyFile, '--tls-key') };
  if (t.clientCaFile) opts.ca = read(t.clientCaFile, '--tls-client-ca');
  try {
    createSecureContext(opts);
  } catch (err) {
    throw new Error(`--tls-cert/--tls-key: not a usable certificate and key (${(err as Error).message})`);
  }
  return opts;
}

export function grpcServerCredentials(t: TlsFiles | null): ServerCredentials {
  if (!t) return ServerCredentials.createInsecure();
  readTlsFiles(t);
  const identity = new experimental.FileWatcherCertificateProvider({ certificateFile: t.certFile, privateKeyFile: t.keyFile, refreshIntervalMs: t.reloadMs });
  const ca = t.clientCaFile ? new experimental.FileWatcherCertificateProvider({ caCertificateFile: t.clientCaFile, refreshIntervalMs: t.reloadMs }) : null;
  // grpc-js takes (identity, ca, requireClientCert), whatever its .d.ts calls the first two.
  return experimental.createCertificateProviderServerCredentials(identity, ca, ca !== null);
}

/** Re-reads the files every `reloadMs` and swaps the HTTPS server's context when they changed. Returns a stop function. */
export function watchHttpsContext(server: HttpsServer, t: TlsFiles, log: Logger, listener: string): () => void {
  let last = JSON.stringify(readTlsFiles(t));
  const timer = setInterval(() => {
    try {
      const opts = readTlsFiles(t);
      const now = JSON.stringify(opts);
      if (now === last) return;
      server.setSecureContext(opts);
      last = now;
      log.info({ cert: t.certFile, listener }, 'TLS certificate reloaded');
    } catch (err) {
      log.error({ err: (err as Error).message }, 'TLS certificate not reloaded; the previous one stays in force');
    }
  }, t.reloadMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Whether the first certificate of a PEM file signed itself: then it can be
 * its own trust anchor (the web console's client does that when
 * TIMELANE_TLS_CA is unset). False for an unreadable file.
 */
export function isSelfSigned(certFile: string): boolean {
  try {
    const cert = new X509Certificate(readFileSync(certFile));
    return cert.checkIssued(cert) && cert.verify(cert.publicKey);
  } catch {
    return false;
  }
}
