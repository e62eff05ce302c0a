import { deleteKeysWithPrefix } from '../../ops/local/redis-keys.js';
import { uniqueName } from './db.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix per test, and a cleanup that deletes every key under it. */
export function redisPrefix(): string {
  return `${uniqueName('tltest')}:`;
}

export function deleteRedisPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  return deleteKeysWithPrefix(url, prefix);
}
