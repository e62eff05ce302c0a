/**
 * Fault: recurring jobs through a kill -9 and a SIGSTOP zombie. Three
 * daemons with a 3 s window (so occurrences are made by the materialisers
 * while the faults happen, not all up front) fire 48 jobs every second. One
 * owner is killed -9; later another is frozen past its lease and woken.
 *
 * Counted per occurrence (job, nominal time) over the span: every one was
 * made exactly once (one first-attempt run), none recorded missed or
 * skipped, and every one reached a worker (lost = 0). Two runs for one
 * occurrence would be a duplicate; redeliveries of the same run after its
 * daemon died (at-least-once) are counted and reported, not duplicates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, sleep } from '../helpers/cluster.js';

const TTL = 1_500;
const JOBS = 48;
const EVERY_MS = 1_000;

describe('fault: recurring jobs through kill -9 and a zombie owner', () => {
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    cluster = await TestCluster.start({
      members: ['a', 'b', 'c'],
      shardCount: 16,
      leaseTtlMs: TTL,
      membershipIntervalMs: 300,
      queue: 'recurring-fault',
      args: () => ['--window-ms', '3000', '--load-interval-ms', '500'],
    });
  });

  afterAll(async () => {
    await cluster?.stopAll();
  });

  it('every occurrence made once and delivered; none missed, skipped or duplicated', async () => {
    const c = cluster!;
    expect(await c.waitAllShardsOwned(20_000, ['a', 'b', 'c'])).not.toBeNull();
    const inputs = Array.from({ length: JOBS }, (_, i) => ({
      queue: c.queue,
      payload: { i },
      leaseMs: 3_000,
      recurrence: { everyMs: EVERY_MS, overlap: 'allow_all' as const },
    }));
    const created = await c.client('c').scheduleBatch(inputs);
    const jobIds = new Set(created.map((s) => s.job.id));
    expect(jobIds.size).toBe(JOBS);
    const startedAt = Date.now();

    await sleep(3_500);
    const killed = await c.killMember('a');
    console.log(`[recurring-fault] killed a at +${killed - startedAt} ms`);
    await sleep(3_500);
    const zombie = c.daemon('b');
    zombie.signal('SIGSTOP');
    const stopAt = Date.now();
    await sleep(3 * TTL);
    zombie.signal('SIGCONT');
    console.log(`[recurring-fault] b stopped ${Date.now() - stopAt} ms from +${stopAt - startedAt} ms`);
    await sleep(4_000);
    // Occurrences due by `until` have had time to be delivered (leases of the killed daemon's runs are 3 s).
    const until = Date.now() - 4_000;

    const { rows } = await c.pool.query<{ job_id: string; nominal_ms: string; status: string; runs: string }>(
      `SELECT job_id, (extract(epoch FROM nominal_at) * 1000)::int8 AS nominal_ms, min(status) AS status, count(*) AS runs
       FROM runs WHERE attempt = 1 AND origin = 'schedule' GROUP BY job_id, nominal_at`,
    );
    const byJob = new Map<string, Map<number, { status: string; runs: number }>>();
    for (const r of rows) {
      const m = byJob.get(r.job_id) ?? new Map();
      m.set(Number(r.nominal_ms), { status: r.status, runs: Number(r.runs) });
      byJob.set(r.job_id, m);
    }
    // Deliveries per occurrence: the idempotency key is "job id:nominal ms".
    const runIdsByOccurrence = new Map<string, Set<string>>();
    let redeliveries = 0;
    const seenRuns = new Set<string>();
    for (const d of c.recorder.deliveries) {
      if (!jobIds.has(d.jobId)) continue;
      const set = runIdsByOccurrence.get(d.idempotencyKey) ?? new Set();
      set.add(d.runId);
      runIdsByOccurrence.set(d.idempotencyKey, set);
      if (seenRuns.has(d.runId)) redeliveries++;
      seenRuns.add(d.runId);
    }

    let expected = 0;
    let lost = 0;
    let duplicates = 0;
    let madeTwice = 0;
    const badStatus: string[] = [];
    for (const jobId of jobIds) {
      const made = byJob.get(jobId) ?? new Map();
      const first = Math.min(...made.keys());
      expect(Number.isFinite(first), `job ${jobId} has occurrences`).toBe(true);
      for (let t = first; t <= until; t += EVERY_MS) {
        expected++;
        const occ = made.get(t);
        if (!occ) {
          lost++;
          continue;
        }
        if (occ.runs > 1) madeTwice++;
        if (occ.status === 'missed' || occ.status === 'skipped') badStatus.push(`${jobId}@${t}:${occ.status}`);
        const delivered = runIdsByOccurrence.get(`${jobId}:${t}`);
        if (!delivered) lost++;
        else if (delivered.size > 1) duplicates += delivered.size - 1;
      }
    }
    const { rows: missedRows } = await c.pool.query<{ n: string }>(`SELECT coalesce(sum(missed_count), 0) AS n FROM jobs`);
    console.log(
      `[recurring-fault] occurrences expected ${expected}, lost ${lost}, made twice ${madeTwice}, delivered as two runs ${duplicates}, redeliveries ${redeliveries}, missed ${missedRows[0].n}`,
    );
    expect(expected).toBeGreaterThan(JOBS * 10);
    expect(lost).toBe(0);
    expect(madeTwice).toBe(0);
    expect(duplicates).toBe(0);
    expect(badStatus).toEqual([]);
    expect(Number(missedRows[0].n)).toBe(0);
  });
});
