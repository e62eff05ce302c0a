/**
 * How a client proves who it is: TLS (optionally with a client certificate,
 * for mTLS) and a bearer token. The token travels as `authorization: Bearer
 * …` metadata added by an interceptor, so it works over TLS and, inside a
 * mesh that terminates TLS for you, over plaintext too.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';

export interface TlsOptions {
  /** CA certificate(s) to verify the daemon with (PEM); default: the system's roots. */
  ca?: Buffer | string;
  /** Client certificate and key (PEM), for mTLS. */
  cert?: Buffer | string;
  key?: Buffer | string;
}

/** Channel credentials for TLS (and mTLS when `cert` and `key` are given). */
export function tlsCredentials(tls: TlsOptions): grpc.ChannelCredentials {
  const buf = (v: Buffer | string | undefined): Buffer | null => (v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v));
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new TypeError('tls: give both cert and key (mTLS), or neither');
  return grpc.credentials.createSsl(buf(tls.ca), buf(tls.key), buf(tls.cert));
}

/** Adds `authorization: Bearer <token>` to every call. */
export function bearerInterceptor(token: string): grpc.Interceptor {
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', `Bearer ${token}`);
        next(metadata, listener);
      },
    });
}

export function tokenInterceptors(token: string | undefined): grpc.Interceptor[] {
  return token ? [bearerInterceptor(token)] : [];
}

export interface EnvConnection {
  credentials?: grpc.ChannelCredentials;
  token?: string;
}

/**
 * The CLI's connection secrets, from the environment (never required on a
 * command line): TIMELANE_TOKEN or TIMELANE_TOKEN_FILE; TIMELANE_TLS_CA,
 * TIMELANE_TLS_CERT, TIMELANE_TLS_KEY (file paths; any of them turns TLS on).
 */
export function connectionFromEnv(env: NodeJS.ProcessEnv = process.env): EnvConnection {
  const read = (name: string): Buffer | undefined => {
    const file = env[name];
    if (!file) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  };
  const tokenFile = read('TIMELANE_TOKEN_FILE');
  const token = env.TIMELANE_TOKEN || tokenFile?.toString('utf8').trim() || undefined;
  const ca = read('TIMELANE_TLS_CA');
  const cert = read('TIMELANE_TLS_CERT');
  const key = read('TIMELANE_TLS_KEY');
  const tls = ca !== undefined || cert !== undefined || key !== undefined || env.TIMELANE_TLS === '1';
  return { token, credentials: tls ? tlsCredentials({ ca, cert, key }) : undefined };
}
