/** The daemon's Redis connection for leases and membership. */
import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

/**
 * Fails fast while Redis is away: a lease we cannot prove must not wait in a
 * queue, and no command may outlive a third of the lease TTL.
 */
export function connectRedis(url: string, leaseTtlMs: number, log: Logger): Redis {
  const redis = new Redis(url, {
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
