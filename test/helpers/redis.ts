import { Redis } from 'ioredis';
import { uniqueName } from './db.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix per test, and a cleanup that deletes every key under it. */
export function redisPrefix(): string {
  return `${uniqueName('tltest')}:`;
}

export async function deleteRedisPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await r.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
