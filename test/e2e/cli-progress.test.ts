/**
 * End to end, the CLI's long operations against two real daemons: `ops
 * drain`, `ops drain --undo`, `ops rebalance`, `backfill` and `replay` by
 * filter print their progress on stderr (plain lines: stderr is a pipe here)
 * — starting at 0 of the total and ending at the total — and then do what
 * they say (the shards moved, the runs made and replayed). With --json no
 * progress is printed. The bar drawn on a terminal is checked in
 * test/unit/cli-progress.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, NonRetryableError, type TimelaneClient, type Worker } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { deleteRedisPrefix, redisPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { closeClient, openClient, startDaemon, stopDaemon, waitUntil, runCli, type CliResult } from '../helpers/e2e.js';
import { track, untrack } from '../helpers/tracked.js';

const SHARDS = 8;
const DEAD = 600;

let db: TestDatabase;
const prefix = redisPrefix();
const daemons = new Map<string, DaemonProcess>();
let client: TimelaneClient;
let worker: Worker | undefined;

beforeAll(async () => {
  db = await createTestDatabase(SHARDS);
  for (const id of ['a', 'b'])
    daemons.set(id, await startDaemon({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, args: ['--member-id', id, '--redis-prefix', prefix, '--shard-count', String(SHARDS)] }));
  client = openClient(daemons.get('a')!.address);
  // Both members hold shards (the balanced assignment), every shard owned.
  const balanced = async (): Promise<boolean> => {
    const shards = await client.listShards().catch(() => []);
    return shards.length === SHARDS && shards.every((s) => s.owner) && shards.some((s) => s.owner === 'b') && shards.some((s) => s.owner === 'a');
  };
  expect(await waitUntil(balanced, 20_000, 100)).toBe(true);
  worker = track(
    createWorker({
      address: [...daemons.values()].map((d) => d.address),
      queues: ['doomed', 'ticks'],
      concurrency: 200,
      handler: (run) => {
        if (run.queue === 'doomed') throw new NonRetryableError('doomed: card declined');
      },
    }),
    'progress worker',
  );
});

afterAll(async () => {
  if (worker) {
    await worker.close(3_000);
    untrack(worker);
  }
  closeClient(client);
  for (const d of daemons.values()) await stopDaemon(d);
  await deleteRedisPrefix(prefix);
  await db?.drop();
});

const cli = (...args: string[]): Promise<CliResult> => runCli(daemons.get('a')!.address, args);

/** The "label: done/total" lines of a command's stderr, as [done, total]. */
function progressOf(stderr: string, label: string): [number, number][] {
  const re = new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: (\\d+)/(\\d+)`);
  return stderr
    .split('\n')
    .map((l) => re.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), Number(m[2])]);
}

async function ownedBy(member: string): Promise<number[]> {
  return (await client.listShards()).filter((s) => s.owner === member).map((s) => s.shard);
}

describe('ops drain and rebalance', () => {
  it('drain shows every move landing, then undo and rebalance do too', async () => {
    const bShards = await ownedBy('b');
    expect(bShards.length).toBeGreaterThan(0);

    const drain = await cli('ops', 'drain', 'b');
    expect(drain.code, drain.stderr).toBe(0);
    const lines = progressOf(drain.stderr, 'drain b');
    expect(lines.length, drain.stderr).toBeGreaterThan(0);
    expect(lines.every(([, total]) => total === bShards.length)).toBe(true);
    expect(lines.at(-1)).toEqual([bShards.length, bShards.length]);
    // Counts never go back.
    for (let i = 1; i < lines.length; i++) expect(lines[i][0]).toBeGreaterThanOrEqual(lines[i - 1][0]);
    expect(drain.stdout).toContain('completed');
    expect(await ownedBy('b')).toEqual([]);

    const undo = await cli('ops', 'drain', 'b', '--undo');
    expect(undo.code, undo.stderr).toBe(0);
    const back = progressOf(undo.stderr, 'undrain b');
    expect(back.at(-1)?.[0]).toBe(back.at(-1)?.[1]);
    expect(back.at(-1)?.[1]).toBeGreaterThan(0);
    expect((await ownedBy('b')).length).toBe(back.at(-1)![1]);

    // An operator move, then a rebalance that takes it back.
    const shard = (await ownedBy('b'))[0];
    const move = await cli('ops', 'move', '--shard', String(shard), '--to', 'a');
    expect(move.code, move.stderr).toBe(0);
    const rebalance = await cli('ops', 'rebalance');
    expect(rebalance.code, rebalance.stderr).toBe(0);
    expect(progressOf(rebalance.stderr, 'rebalance').at(-1)).toEqual([1, 1]);
    expect((await client.listShards()).find((s) => s.shard === shard)?.owner).toBe('b');

    // --json: the result only, no progress.
    const quiet = await cli('ops', 'drain', 'b', '--json');
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(progressOf(quiet.stderr, 'drain b')).toEqual([]);
    expect(JSON.parse(quiet.stdout)).toMatchObject({ completed: true });
    expect((await cli('ops', 'drain', 'b', '--undo', '--json')).code).toBe(0);
  });
});

describe('replay by filter', () => {
  it(`replays ${DEAD} dead runs in chunks, from 0/${DEAD} to ${DEAD}/${DEAD}`, async () => {
    const scheduled = await client.scheduleBatch(Array.from({ length: DEAD }, () => ({ queue: 'doomed', delayMs: 100 })));
    const ids = new Set(scheduled.map((s) => s.run.id));
    let deadSeen = 0;
    expect(
      await waitUntil(async () => {
        let dead = 0;
        let pageToken = '';
        do {
          const page = await client.listDeadRuns({ queue: 'doomed', pageSize: 1000, pageToken: pageToken || undefined });
          dead += page.runs.filter((r) => ids.has(r.id)).length;
          pageToken = page.nextPageToken;
        } while (pageToken);
        deadSeen = dead;
        return dead === DEAD;
      }, 30_000, 250),
      `dead ${deadSeen}; statuses ${JSON.stringify(await client.listRuns({ queue: 'doomed', pageSize: 1000 }).then((p) => p.runs.reduce<Record<string, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {})))}`,
    ).toBe(true);

    const replay = await cli('replay', '--queue', 'doomed', '--error', 'declined', '--max', String(DEAD));
    expect(replay.code, replay.stderr).toBe(0);
    const lines = progressOf(replay.stderr, 'replay');
    expect(lines[0]).toEqual([0, DEAD]);
    expect(lines.at(-1)).toEqual([DEAD, DEAD]);
    const replayed = replay.stdout.split('\n').filter((l) => / replayed as run /.test(l));
    expect(replayed).toHaveLength(DEAD);
    expect(new Set(replayed.map((l) => l.split(' ')[1]))).toEqual(ids);
  });
});

describe('backfill', () => {
  it('counts the range, then makes it in slices with progress; a repeat makes nothing new', async () => {
    const { job } = await client.scheduleRecurring({ queue: 'ticks', recurrence: { everyMs: 1_000 } });
    const to = Date.now() - 2_000;
    const from = to - 300_000;
    const first = await cli('backfill', job.id, '--from', String(from), '--to', String(to));
    expect(first.code, first.stderr).toBe(0);
    const lines = progressOf(first.stderr, `backfill ${job.id}`);
    expect(lines[0]).toEqual([0, 300]);
    expect(lines.at(-1)).toEqual([300, 300]);
    expect(first.stdout).toContain('300 runs created, 0 already existed');
    const runs = await client.listRuns({ jobId: job.id, pageSize: 1000 });
    expect(runs.runs.filter((r) => r.origin === 'backfill')).toHaveLength(300);

    const again = await cli('backfill', job.id, '--from', String(from), '--to', String(to), '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ created: 0, alreadyExisted: 300, occurrences: 300 });
    expect(progressOf(again.stderr, `backfill ${job.id}`)).toEqual([]);

    // Over --max: refused whole by the count, nothing made.
    const over = await cli('backfill', job.id, '--from', String(from - 300_000), '--to', String(from), '--max', '100');
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('max_runs');
    expect((await client.listRuns({ jobId: job.id, pageSize: 1000 })).runs.filter((r) => r.origin === 'backfill')).toHaveLength(300);
  });
});
