/**
 * Fault: every Postgres connection the daemon has open goes silent (a NAT or
 * firewall forgot them: no reset, nothing answers) — here the slow lane's:
 * the window loader's, the API's and the LISTEN connection. Their statements
 * are not bounded (a first load after an outage may rightly take long), so
 * before the silence watch the loader waited on its silent connection for
 * as long as TCP takes to give up (behind this proxy, for ever): a run due
 * beyond the window was never loaded and never fired. Now a statement that
 * has waited --database-statement-timeout-ms gets its backend looked up in
 * pg_stat_activity on a fresh connection; a backend that is not running it
 * means the connection is dead, and it is dropped. The LISTEN connection is
 * probed with SELECT 1 at the same period. Counts: every run fired once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Status } from '@grpc/grpc-js';
import { closeClient, openClient, sleep, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { startProxiedDaemon, type ProxiedDaemon } from '../helpers/proxied-daemon.js';

const SHARDS = 4;
const TIMEOUT_MS = 1_000;
const WINDOW_MS = 2_000;

let t: ProxiedDaemon | undefined;

beforeAll(async () => {
  t = await startProxiedDaemon({
    shards: SHARDS,
    queue: 'slow-lane',
    args: ['--database-statement-timeout-ms', String(TIMEOUT_MS), '--window-ms', String(WINDOW_MS), '--load-interval-ms', '200', '--stop-timeout-ms', '3000'],
  });
});

afterAll(async () => {
  await t?.stop();
});

describe('fault: the slow lane’s Postgres connections go silent', () => {
  it('runs due beyond the window are still loaded and fired, and the API answers again', async () => {
    const { client, worker, proxy, direct, daemon } = t!;
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    const warm = await client.schedule({ queue: 'slow-lane', delayMs: 100 });
    expect(await waitUntil(() => worker.recorder.has(warm.run.id), 10_000)).toBe(true);

    // Due 3 windows ahead: only the loader can bring it into the heap, after the silence.
    const farDue = Date.now() + 3 * WINDOW_MS;
    const far = await client.schedule({ queue: 'slow-lane', at: farDue });
    await sleep(200); // the loader's next pass is under way or idle on a pooled connection
    expect(proxy.silenceOpen()).toBeGreaterThan(0);

    // A user's schedule after the silence: retried on UNAVAILABLE / DEADLINE_EXCEEDED, made safe by its dedupe key.
    const laterDue = Date.now() + 4 * WINDOW_MS;
    let later: Awaited<ReturnType<typeof client.schedule>> | undefined;
    const tries: string[] = [];
    const impatient = openClient(daemon.address, 5_000);
    for (const until = Date.now() + 20_000; !later && Date.now() < until; ) {
      try {
        later = await impatient.schedule({ queue: 'slow-lane', at: laterDue, dedupeKey: 'after-the-silence' });
      } catch (err) {
        const code = (err as { code?: number }).code;
        expect([Status.UNAVAILABLE, Status.DEADLINE_EXCEEDED], String(err)).toContain(code);
        tries.push(String(code));
      }
    }
    closeClient(impatient);
    expect(later, `schedule after the silence never succeeded (${tries.join(', ')})`).toBeDefined();

    const ids = [far.run.id, later!.run.id];
    const w = worker;
    const allIn = await waitUntil(() => ids.every((id) => w.recorder.has(id)), Math.max(0, laterDue - Date.now()) + 15_000, 50);
    expect(allIn, `received ${ids.filter((id) => w.recorder.has(id)).length} of 2`).toBe(true);
    const farLate = w.recorder.byRun.get(far.run.id)![0].receivedAt - farDue;
    console.log(`[silent-slow-lane] far run ${farLate} ms late; schedule retried ${tries.length}×; ${daemon.logs.filter((l) => /went silent/.test(String(l.msg))).length} connections found silent`);
    // Found silent after the timeout plus a confirming second; then loaded and claimed.
    expect(farLate).toBeLessThan(8_000);
    expect(w.recorder.duplicates()).toEqual([]);
    expect(daemon.logs.some((l) => /went silent/.test(String(l.msg)))).toBe(true);
    expect(daemon.logs.some((l) => /LISTEN connection did not answer its probe/.test(String(l.msg)))).toBe(true);

    const { rows } = await direct.query<{ n: number }>(`SELECT count(*)::int AS n FROM timelane.runs WHERE id = ANY($1::int8[]) AND status IN ('fired', 'completed')`, [ids.map(Number)]);
    expect(rows[0].n).toBe(2);
  }, 60_000);
});
