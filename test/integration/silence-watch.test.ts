/**
 * SilenceWatch against a real Postgres: a statement that is merely slow is
 * never touched, however long it runs past the suspicion threshold (its
 * backend is 'active'); a statement on a connection gone silent (through a
 * TcpProxy: nothing arrives, nothing resets) fails as a lost connection
 * within the threshold plus the confirming two seconds, and the pool serves
 * the next statement on a fresh connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientConfig, createPool, query, type Db } from '../../daemon/db/pool.js';
import { SilenceWatch } from '../../daemon/db/silence-watch.js';
import { createLogger } from '../../daemon/log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const SUSPECT_AFTER_MS = 300;

let db: TestDatabase;
let proxy: TcpProxy;
let pool: Db;
let watch: SilenceWatch;
const warnings: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase(1);
  const url = new URL(db.url);
  proxy = await TcpProxy.start(`${url.hostname}:${url.port || 5432}`);
  url.port = String(proxy.port);
  const opts = { ...db.opts, url: url.toString(), poolSize: 2 };
  pool = createPool(opts);
  const log = createLogger('warn');
  const warn = log.warn.bind(log);
  log.warn = ((obj: unknown, msg?: string) => {
    warnings.push(String(msg));
    warn(obj as object, msg);
  }) as typeof log.warn;
  // The check asks Postgres directly (a fresh connection would work through the proxy too; direct keeps it out of the fault).
  watch = new SilenceWatch({ pools: { api: pool }, clientConfig: clientConfig(db.opts), suspectAfterMs: SUSPECT_AFTER_MS, log });
  watch.start();
});

afterAll(async () => {
  watch?.stop();
  await proxy?.close();
  await pool?.end().catch(() => undefined);
  await db?.drop();
});

describe('SilenceWatch', () => {
  it('leaves a slow statement alone, however long past the threshold', async () => {
    const started = performance.now();
    const { rows } = await query<{ ok: number }>(pool, 'SELECT 1 AS ok FROM pg_sleep(2.5)');
    expect(rows[0].ok).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(warnings).toEqual([]);
  });

  it('drops a connection gone silent: its statement fails as unavailable, the next one works', async () => {
    await query(pool, 'SELECT 1'); // a pooled connection is open
    expect(proxy.silenceOpen()).toBeGreaterThan(0);
    const started = performance.now();
    const err = await query(pool, 'SELECT 1').then(
      () => null,
      (e: unknown) => e,
    );
    const tookMs = performance.now() - started;
    expect(err, 'the statement on the silent connection must fail').toBeInstanceOf(Error);
    expect((err as { kind?: string }).kind).toBe('unavailable');
    // Suspect after 300 ms, confirmed 2 s later, looked at every 250 ms; the check itself takes a connection.
    expect(tookMs).toBeGreaterThanOrEqual(SUSPECT_AFTER_MS + 1_900);
    expect(tookMs).toBeLessThan(SUSPECT_AFTER_MS + 5_000);
    expect(warnings.some((w) => /went silent/.test(w))).toBe(true);
    const { rows } = await query<{ ok: number }>(pool, 'SELECT 1 AS ok');
    expect(rows[0].ok).toBe(1);
  });
});
