/**
 * Ids of new jobs and workflow runs: UUIDv7 (RFC 9562), a millisecond
 * timestamp then 73 random bits.
 *
 * Why not random (v4) ids: every new job adds a key to `jobs_pkey` and
 * `runs_job`, and random keys land on random index pages. In a database that
 * already holds millions of jobs that means a page read and, after each
 * checkpoint, a whole page written to the WAL per key; time-ordered keys all
 * go to the right edge of the index. With 2,000,000 jobs present, one
 * connection's ScheduleBatch wrote 2,166 bytes of WAL per job with v4 ids and
 * 859 with v7 (bench/README.md). Shards still spread evenly: shardOf hashes
 * the whole id, random bits included.
 *
 * The random bits come from a pool refilled 256 ids at a time: `uuid`'s v7
 * asks the system for 16 bytes per id, which cost about 3 µs an id here;
 * from the pool it is 0.4-0.8 µs, several times crypto.randomUUID's
 * 0.06-0.35 µs but under a millisecond per 1,000-job batch.
 */
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let next = POOL_IDS;

/** One new id, time-ordered at `msecs` (default now). */
export function newId(msecs: number = Date.now()): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const at = 16 * next++;
  return v7({ msecs, random: pool.subarray(at, at + 16) });
}

/** `n` new ids, all of this millisecond. */
export function newIds(n: number): string[] {
  const now = Date.now();
  const ids = new Array<string>(n);
  for (let k = 0; k < n; k++) ids[k] = newId(now);
  return ids;
}
