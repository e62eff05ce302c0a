/**
 * A daemon whose Postgres connections all go through a TcpProxy (to swallow
 * answers, cut or silence connections), with leases in Redis (long: 10 s, so
 * a fault of a few seconds on the Postgres side does not cost the shards), a
 * recording worker on one queue, and a direct Postgres connection that
 * bypasses the proxy to look at the runs. `stop()` undoes all of it.
 */
import pg from 'pg';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, type RecordingWorker } from './e2e.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from './redis.js';
import { TcpProxy } from './tcp-proxy.js';

export interface ProxiedDaemon {
  db: TestDatabase;
  proxy: TcpProxy;
  daemon: DaemonProcess;
  client: TimelaneClient;
  worker: RecordingWorker;
  /** Straight to Postgres, not through the proxy. */
  direct: pg.Client;
  stop(): Promise<void>;
}

export async function startProxiedDaemon(opts: { shards: number; queue: string; args?: string[] }): Promise<ProxiedDaemon> {
  const prefix = redisPrefix();
  const db = await createTestDatabase(opts.shards);
  const parts: Partial<ProxiedDaemon> = { db };
  const stop = async (): Promise<void> => {
    await parts.direct?.end();
    await parts.worker?.close();
    closeClient(parts.client);
    await stopDaemon(parts.daemon);
    await parts.proxy?.close();
    await deleteRedisPrefix(prefix);
    await db.drop();
  };
  try {
    const url = new URL(db.url);
    parts.proxy = await TcpProxy.start(`${url.hostname}:${url.port || 5432}`);
    url.port = String(parts.proxy.port);
    // Leases in Redis: Postgres leases would renew through the faulty proxy too.
    parts.daemon = await startDaemon({
      databaseUrl: url.toString(),
      redisUrl: TEST_REDIS_URL,
      args: ['--lease-ttl-ms', '10000', '--redis-prefix', prefix, ...(opts.args ?? [])],
    });
    parts.client = openClient(parts.daemon.address);
    parts.worker = collectRuns({ address: parts.daemon.address, queues: [opts.queue] });
    parts.direct = new pg.Client({ connectionString: db.url });
    parts.direct.on('error', () => undefined); // a failed query rejects; only an idle drop would be an uncaught event
    await parts.direct.connect();
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...(parts as Omit<ProxiedDaemon, 'stop'>), stop };
}
