/**
 * The daemon's security settings turned into what its listeners use: gRPC
 * server credentials (TLS, mTLS), the authentication gate, and the TLS files
 * for HTTPS listeners. Built once at start; files are re-read while running.
 */
import type { Metadata, ServerCredentials, ServerInterceptor } from '@grpc/grpc-js';
import type { DaemonConfig } from '../config.js';
import type { Logger } from '../log.js';
import { authInterceptor, stillAdmitted } from './authorize.js';
import { credentialsFile } from './credentials-file.js';
import { grpcServerCredentials, type TlsFiles } from './tls.js';

export interface ListenerSecurity {
  grpcCredentials: ServerCredentials;
  interceptor: ServerInterceptor;
  /** For HTTPS listeners (metrics); null: plaintext. */
  tls: TlsFiles | null;
  /** For the start log line and the dev banner. */
  summary: { tls: 'off' | 'tls' | 'mtls'; auth: 'open' | 'tokens' | 'certificates' | 'tokens+certificates' };
  /** Whether a call's identity (the gate's headers) is still in the credentials file. */
  stillAdmitted(metadata: Metadata): boolean;
  stop(): void;
}

export function listenerSecurity(cfg: DaemonConfig, log: Logger): ListenerSecurity {
  const tls: TlsFiles | null = cfg.tlsCert ? { certFile: cfg.tlsCert, keyFile: cfg.tlsKey, clientCaFile: cfg.tlsClientCa || null, reloadMs: cfg.tlsReloadMs } : null;
  const file = cfg.authFile ? credentialsFile(cfg.authFile, log, cfg.tlsReloadMs) : null;
  file?.start();
  const mtls = tls?.clientCaFile != null;
  const auth = file === null ? (mtls ? 'certificates' : 'open') : mtls ? 'tokens+certificates' : 'tokens';
  // mTLS with no credentials file: every verified certificate is trusted, as an admin.
  const credentials = file ? () => file.current : null;
  return {
    grpcCredentials: grpcServerCredentials(tls),
    interceptor: authInterceptor({ credentials, log }),
    tls,
    summary: { tls: tls === null ? 'off' : mtls ? 'mtls' : 'tls', auth },
    stillAdmitted: (metadata) => stillAdmitted(metadata, credentials ? credentials() : null),
    stop: () => file?.stop(),
  };
}
