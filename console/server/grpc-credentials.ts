/**
 * How the console's clients reach their own daemon's gRPC port when it
 * speaks TLS. They dial it on loopback, so the certificate's chain is
 * verified (against `caFile`) but not its host name (it names the host
 * others dial, not 127.0.0.1). Under mTLS the console presents its own
 * client certificate, when given one.
 */
import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The console's own client certificate under mTLS: TIMELANE_CONSOLE_TLS_CERT
 * and _KEY, else the CLI's TIMELANE_TLS_CERT and _KEY unless they are the
 * daemon's own certificate. Set in the environment, those names configure
 * the daemon's --tls-cert and --tls-key: a console presenting our server's
 * key pair would make whoever reaches its port act with that identity
 * (under --tls-client-ca alone, an admin).
 */
export function consoleClientIdentity(env: Env, ownKeyFile: string | null): Pick<ConsoleTlsFiles, 'certFile' | 'keyFile'> {
  const pair = (cert: string, key: string): Pick<ConsoleTlsFiles, 'certFile' | 'keyFile'> => {
    if (!env[cert] !== !env[key]) throw new Error(`web console: ${env[cert] ? key : cert} is not set (${cert} and ${key} go together)`);
    return { certFile: env[cert], keyFile: env[key] };
  };
  if (env.TIMELANE_CONSOLE_TLS_CERT || env.TIMELANE_CONSOLE_TLS_KEY) return pair('TIMELANE_CONSOLE_TLS_CERT', 'TIMELANE_CONSOLE_TLS_KEY');
  if (!env.TIMELANE_TLS_CERT && !env.TIMELANE_TLS_KEY) return {};
  const cli = pair('TIMELANE_TLS_CERT', 'TIMELANE_TLS_KEY');
  // The same key pair as ours, whatever its files look like (a full chain, other line endings): never presented.
  return ownKeyFile && samePublicKey(cli.keyFile!, ownKeyFile) ? {} : cli;
}

function samePublicKey(a: string, b: string): boolean {
  const spki = (file: string): Buffer => createPublicKey(readFileSync(file)).export({ type: 'spki', format: 'der' });
  try {
    return spki(a).equals(spki(b));
  } catch {
    return a === b;
  }
}

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
