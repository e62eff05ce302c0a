/**
 * How the console's clients reach their own daemon's gRPC port when it
 * speaks TLS. They dial it on loopback, so the certificate's chain is
 * verified (against `caFile`) but not its host name (it names the host
 * others dial, not 127.0.0.1). Under mTLS the console presents its own
 * client certificate, when given one.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

export interface ConsoleTlsFiles {
  /** PEM CA (or the daemon's self-signed or full-chain certificate) to verify the daemon with. */
  caFile: string;
  /** The console's client certificate and key (mTLS); both or neither. */
  certFile?: string;
  keyFile?: string;
}

export function consoleClientCredentials(files: ConsoleTlsFiles): grpc.ChannelCredentials {
  const read = (file: string | undefined, what: string): Buffer | null => {
    if (!file) return null;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`web console: cannot read the ${what} ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  };
  return grpc.credentials.createSsl(read(files.caFile, 'CA'), read(files.keyFile, 'client key'), read(files.certFile, 'client certificate'), {
    checkServerIdentity: () => undefined,
  });
}
