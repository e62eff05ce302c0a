/**
 * The fence, as the fire path sees it (DESIGN I-1: Postgres is the arbiter).
 *
 * A daemon may write on behalf of a shard only under the fencing token it
 * acquired, and every such write re-checks that token against `shards.fence`
 * in the same statement. This module is the one place that (a) reads the
 * fences this daemon holds, in the array form the fenced statements take,
 * and (b) decides what a refused fenced write means: the shard's fence in
 * Postgres moved past ours ⇒ ownership is lost ⇒ drop the shard (Temporal's
 * handleWriteErrorLocked: stop the shard, a new acquisition gets a new fence).
 */
import type { Queryable } from '../db/pool.js';
import { query } from '../db/pool.js';
import { SHARD_FENCES } from '../db/queries/window.js';
import type { Logger } from '../log.js';
import { LOST_STALE_FENCE } from './shard-leases.js';

/** What the fire path needs of the lease manager. */
export interface ShardFences {
  fenceOf(shard: number): number | undefined;
  /** Held and provably valid (lease not past its monotonic validity). */
  isValid(shard: number): boolean;
  drop(shard: number, reason: string): void;
  /** Held shards with their fences. */
  owned(): readonly { shard: number; fence: number }[];
}

/** Parameters of a fenced statement: parallel arrays of shards and the fences we hold for them. */
export interface FenceArrays {
  shards: number[];
  fences: number[];
}

/** Every shard we hold, as fenced-statement parameters. */
export function heldFences(fences: ShardFences): FenceArrays {
  const owned = fences.owned();
  return { shards: owned.map((l) => l.shard), fences: owned.map((l) => l.fence) };
}

/**
 * A fenced write on these shards, made under `usedFences`, changed fewer rows
 * than asked. Drops every shard whose fence in Postgres is now past the one we
 * hold, and returns them. A write issued under an older lease must not drop
 * the lease we re-acquired since: only a Postgres fence above the current one
 * counts.
 */
export async function dropStaleShards(
  db: Queryable,
  fences: ShardFences,
  usedFences: ReadonlyMap<number, number>,
  log: Logger,
): Promise<Set<number>> {
  const { rows } = await query<{ shard: number; fence: number }>(db, SHARD_FENCES, [[...usedFences.keys()]]);
  const stale = new Set<number>();
  for (const r of rows) {
    const held = fences.fenceOf(r.shard);
    if (r.fence !== usedFences.get(r.shard) && held !== undefined && r.fence > held) {
      stale.add(r.shard);
      log.warn({ shard: r.shard, fence: usedFences.get(r.shard), postgresFence: r.fence }, 'fenced write refused: fence is stale');
      fences.drop(r.shard, LOST_STALE_FENCE);
    }
  }
  return stale;
}
