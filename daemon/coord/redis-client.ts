/** The daemon's Redis connection for leases and membership. */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

/** TLS to Redis: a CA (and a client certificate for mTLS), PEM file paths; empty strings for none. */
export interface RedisTlsFiles {
  ca: string;
  cert: string;
  key: string;
}

function redisTls(url: string, files: RedisTlsFiles | undefined): ConnectionOptions | undefined {
  const read = (file: string, flag: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`${flag}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  };
  if (!files?.ca && !files?.cert && !url.startsWith('rediss:')) return undefined;
  return {
    ...(files?.ca ? { ca: read(files.ca, '--redis-tls-ca') } : {}),
    ...(files?.cert ? { cert: read(files.cert, '--redis-tls-cert'), key: read(files.key, '--redis-tls-key') } : {}),
  };
}

/**
 * Fails fast while Redis is away: a lease we cannot prove must not wait in a
 * queue, and no command may outlive a third of the lease TTL.
 */
export function connectRedis(url: string, leaseTtlMs: number, log: Logger, tlsFiles?: RedisTlsFiles): Redis {
  const tls = redisTls(url, tlsFiles);
  const redis = new Redis(url, {
    ...(tls ? { tls } : {}),
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    commandTimeout: Math.max(200, Math.floor(leaseTtlMs / 3)),
  });
  redis.on('error', (err) => log.debug({ err: String(err) }, 'redis connection error'));
  return redis;
}

/** Resolves when the client is ready or after `ms` (Redis down: the daemon starts anyway and keeps trying). */
export function waitReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      redis.off('ready', done);
      resolve();
    }
    redis.once('ready', done);
  });
}
