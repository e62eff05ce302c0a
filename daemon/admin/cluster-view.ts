/**
 * Admin reads: the shard map and the member list, as this daemon sees them.
 * Read-only; runs on the API pool.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { LIST_SHARDS, type ShardRow } from '../db/queries/admin.js';
import { assignShards } from '../cluster/assignment.js';
import type { ClusterMember } from '../cluster/cluster-member.js';
import type { ShardInfo } from '../../proto/gen/timelane/v1/ShardInfo.js';
import type { Member } from '../../proto/gen/timelane/v1/Member.js';

export interface ClusterViewDeps {
  db: Db;
  memberId: string;
  address: () => string;
  startedAtMs: number;
  cluster: () => ClusterMember | null;
  isOwned: (shard: number) => boolean;
  ownedCount: () => number;
  runsInWindow: (shard: number) => number;
}

export async function listShards(d: ClusterViewDeps): Promise<ShardInfo[]> {
  const { rows } = await query<ShardRow>(d.db, LIST_SHARDS);
  const cluster = d.cluster();
  const view = cluster?.view;
  const assigned = view ? assignShards(view) : [];
  const now = Date.now();
  return rows.map((r) => {
    const here = d.isOwned(r.shard);
    return {
      leaseAgeMs: String(r.owner && r.acquired_at_ms ? Math.max(0, now - r.acquired_at_ms) : 0),
      lagMs: r.next_due_at_ms && r.next_due_at_ms < now ? now - r.next_due_at_ms : 0,
      assignedTo: assigned[r.shard] ?? (cluster ? '' : d.memberId),
      shard: r.shard,
      owner: r.owner ?? '',
      fence: String(r.fence),
      runsInWindow: here ? d.runsInWindow(r.shard) : 0,
      nextDueAtMs: String(r.next_due_at_ms ?? 0),
      acquiredAtMs: String(r.acquired_at_ms ?? 0),
      ownedHere: here,
    };
  });
}

export function listMembers(d: ClusterViewDeps): Member[] {
  const cluster = d.cluster();
  if (!cluster) {
    return [
      {
        id: d.memberId,
        grpcAddress: d.address(),
        ownedShards: d.ownedCount(),
        startedAtMs: String(d.startedAtMs),
        lastSeenMs: String(Date.now()),
      },
    ];
  }
  return cluster.members.map((m) => ({
    id: m.id,
    grpcAddress: m.address,
    ownedShards: m.id === d.memberId ? d.ownedCount() : m.ownedShards,
    startedAtMs: String(m.startedAtMs),
    lastSeenMs: String(m.lastSeenMs),
  }));
}
