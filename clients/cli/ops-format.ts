/** Text rendering and merging for `timelane ops …`. Pure functions. */
import { formatDuration } from '@timelane/client';
import { iso, table } from './format.js';
import type { MemberInfo, ShardInfo, ShardMoveInfo } from '@timelane/client';

/** A shard as `ops shards` shows it: runs in window taken from its owner, null when the owner could not be asked. */
export interface ShardView extends Omit<ShardInfo, 'runsInWindow'> {
  runsInWindow: number | null;
}

/**
 * Merges one daemon's shard list (owners, fences: all daemons read the same
 * rows) with the lists of every member: only a shard's owner knows how many
 * of its runs are in the window. `others` holds each member's answer, or
 * null when it could not be asked.
 */
export function mergeShardViews(primary: readonly ShardInfo[], others: readonly (readonly ShardInfo[] | null)[]): ShardView[] {
  const known = new Map<number, number>();
  for (const list of [primary, ...others]) {
    if (!list) continue;
    for (const s of list) if (s.ownedHere) known.set(s.shard, s.runsInWindow);
  }
  return primary.map((s) => ({ ...s, runsInWindow: known.get(s.shard) ?? (s.owner ? null : 0) }));
}

/** Whether the shard is not (yet) where the assignment wants it. */
export function isMoving(s: Pick<ShardInfo, 'owner' | 'assignedTo'>): boolean {
  return s.assignedTo !== '' && s.owner !== s.assignedTo;
}

export function shardsTable(shards: readonly ShardView[]): string {
  return table(
    ['SHARD', 'OWNER', 'ASSIGNED', 'FENCE', 'LEASE AGE', 'IN WINDOW', 'NEXT DUE', 'LAG', ''],
    shards.map((s) => [
      String(s.shard),
      s.owner || '-',
      s.assignedTo || '-',
      String(s.fence),
      s.owner ? formatDuration(s.leaseAgeMs) : '-',
      s.runsInWindow === null ? '?' : String(s.runsInWindow),
      iso(s.nextDueAtMs),
      s.lagMs > 0 ? formatDuration(s.lagMs) : '-',
      isMoving(s) ? (s.owner ? 'moving' : 'unowned') : '',
    ]),
  );
}

/** Shards per owner, sorted by member id; '' (unowned) last. */
export function ownerCounts(shards: readonly Pick<ShardInfo, 'owner'>[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const s of shards) counts.set(s.owner, (counts.get(s.owner) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : a > b ? 1 : 0));
}

/** "64 shards: a 22, b 21, c 21, unowned 0; moving 0; max lag 0ms". */
export function shardsSummary(shards: readonly ShardView[]): string {
  const owners = ownerCounts(shards.filter((s) => s.owner));
  const unowned = shards.filter((s) => !s.owner).length;
  const moving = shards.filter(isMoving).length;
  const maxLag = Math.max(0, ...shards.map((s) => s.lagMs));
  const parts = owners.map(([o, n]) => `${o} ${n}`);
  parts.push(`unowned ${unowned}`);
  return `${shards.length} shards: ${parts.join(', ')}; moving ${moving}; max lag ${formatDuration(maxLag)}`;
}

export function membersTable(members: readonly MemberInfo[], now = Date.now()): string {
  return table(
    ['MEMBER', 'ADDRESS', 'SHARDS', 'UP', 'LAST SEEN'],
    members.map((m) => [
      m.id,
      m.grpcAddress || '-',
      String(m.ownedShards),
      m.startedAtMs ? formatDuration(Math.max(0, now - m.startedAtMs)) : '-',
      m.lastSeenMs ? `${formatDuration(Math.max(0, now - m.lastSeenMs))} ago` : '-',
    ]),
  );
}

export function movesTable(moves: readonly ShardMoveInfo[]): string {
  if (moves.length === 0) return 'no moves';
  return table(
    ['SHARD', 'FROM', 'TO'],
    [...moves].sort((a, b) => a.shard - b.shard).map((m) => [String(m.shard), m.fromMember || '-', m.toMember || '-']),
  );
}

/** "shard 5: a -> b (handoff 12.3ms)". */
export function moveLine(move: ShardMoveInfo, handoffMs?: number): string {
  const tail = handoffMs === undefined ? '' : ` (handoff ${formatDuration(handoffMs)})`;
  return `shard ${move.shard}: ${move.fromMember || '-'} -> ${move.toMember || '-'}${tail}`;
}

/** "a  22" lines, sorted by member id. */
export function perMemberLines(perMember: Readonly<Record<string, number>>): string {
  const rows = Object.entries(perMember).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (rows.length === 0) return '(no members)';
  return table(['MEMBER', 'SHARDS'], rows.map(([m, n]) => [m, String(n)]));
}

/** Moves per (from -> to) pair: "a -> c: 3, b -> c: 4". */
export function moveSummary(moves: readonly ShardMoveInfo[]): string {
  const pairs = new Map<string, number>();
  for (const m of moves) {
    const k = `${m.fromMember || '-'} -> ${m.toMember || '-'}`;
    pairs.set(k, (pairs.get(k) ?? 0) + 1);
  }
  return [...pairs].map(([k, n]) => `${k}: ${n}`).join(', ');
}
