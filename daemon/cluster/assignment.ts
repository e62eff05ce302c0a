/**
 * Shard assignment: a pure, deterministic function from the cluster view to
 * "who should own each shard". Every member computes it from the same view,
 * so they agree without talking; leases (and fences) make any disagreement
 * during a change harmless.
 *
 * Rules for each shard (an operator override — `ops move` to a live, undrained
 * member — wins over all of them and moves nothing else):
 * 1. A shard pinned to a member (`--shards`, sidecar mode): that member if it
 *    is live; otherwise it is an orphan and goes to an adopter
 *    (`--adopt-orphans` / `--standby`), by rendezvous hashing; with no adopter
 *    it falls back to the balanced members, so runs still fire.
 * 2. Any other shard: the balanced members (neither pinned nor standby), by
 *    rendezvous hashing with bounded load (no member gets more than
 *    floor or ceil of shards / members), so shares differ by at most one.
 * Drained members (`ops drain`) own nothing.
 *
 * Suspects (record still there, liveness lapsed: killed or frozen) keep their
 * place in the balanced assignment, but each shard the rules give a suspect
 * goes where it would go without the suspects. So:
 * - only a suspect's shards change hands: a wrong suspicion (a slow but live
 *   member) moves nothing else, and the suspect keeps its shards anyway as long
 *   as it keeps extending their leases (peers are refused until they lapse);
 * - when the suspect's record finally expires, its shards are already where
 *   the assignment without it puts them: the takeover is not followed by a
 *   second move of the same shards.
 */

export interface MemberView {
  id: string;
  /** Shards pinned to this member; empty for a balanced member. */
  pinned: readonly number[];
  adoptOrphans: boolean;
  standby: boolean;
}

export interface ClusterView {
  shardCount: number;
  /** Live members (heartbeat not expired). */
  members: readonly MemberView[];
  /** Every known pin, including members that are gone: shard → member id. */
  pins: ReadonlyMap<number, string>;
  /** Members an operator drained. */
  drained: ReadonlySet<string>;
  /** Operator moves: shard → member id. */
  overrides: ReadonlyMap<number, string>;
  /** Members (in `members`) whose liveness lapsed: their shards go to the assignment without them. */
  suspects?: ReadonlySet<string>;
}

/** Rendezvous score of (member, shard): FNV-1a over both, then a 32-bit mix. */
export function score(memberId: string, shard: number): number {
  let h = 0x811c9dc5;
  const s = `${memberId}\u0000${shard}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  return h >>> 0;
}

function ranked(candidates: readonly string[], shard: number): string[] {
  return [...candidates].sort((a, b) => score(b, shard) - score(a, shard) || (a < b ? -1 : 1));
}

/** Returns shard → member id (null when no live member can take it). */
export function assignShards(view: ClusterView): (string | null)[] {
  const suspects = view.suspects ?? new Set<string>();
  const full = assignMembers(view);
  if (!view.members.some((m) => suspects.has(m.id))) return full;
  const without = assignMembers({ ...view, members: view.members.filter((m) => !suspects.has(m.id)) });
  return full.map((owner, shard) => (owner !== null && suspects.has(owner) ? without[shard] : owner));
}

/** The rules above over `view.members`, suspects ignored. */
function assignMembers(view: ClusterView): (string | null)[] {
  const live = view.members.filter((m) => !view.drained.has(m.id));
  const liveIds = new Set(live.map((m) => m.id));
  const balanced = live.filter((m) => m.pinned.length === 0 && !m.standby).map((m) => m.id);
  const adopters = live.filter((m) => m.adoptOrphans || m.standby).map((m) => m.id);
  const out: (string | null)[] = new Array<string | null>(view.shardCount).fill(null);

  const pool: number[] = []; // shards handed out by bounded-load rendezvous
  const orphans: number[] = [];
  for (let shard = 0; shard < view.shardCount; shard++) {
    const pinnedTo = view.pins.get(shard);
    if (pinnedTo !== undefined) {
      if (liveIds.has(pinnedTo)) out[shard] = pinnedTo;
      else orphans.push(shard);
      continue;
    }
    pool.push(shard);
  }
  for (const shard of orphans) {
    const candidates = adopters.length > 0 ? adopters : balanced.length > 0 ? balanced : [...liveIds];
    out[shard] = candidates.length > 0 ? ranked(candidates, shard)[0] : null;
  }
  const takers = balanced.length > 0 ? balanced : adopters.length > 0 ? adopters : [...liveIds];
  if (takers.length > 0) {
    // Capacities differ by at most one: the first (pool % n) members by id get the extra shard.
    const sorted = [...takers].sort();
    const base = Math.floor(pool.length / takers.length);
    const cap = new Map(sorted.map((id, i) => [id, base + (i < pool.length % takers.length ? 1 : 0)]));
    const load = new Map(takers.map((id) => [id, 0]));
    for (const shard of pool) {
      const pick = ranked(takers, shard).find((id) => (load.get(id) ?? 0) < (cap.get(id) ?? 0)) ?? takers[0];
      out[shard] = pick;
      load.set(pick, (load.get(pick) ?? 0) + 1);
    }
  }
  // Operator moves apply last, so a move changes that shard and nothing else.
  for (const [shard, member] of view.overrides) {
    if (shard >= 0 && shard < view.shardCount && liveIds.has(member)) out[shard] = member;
  }
  return out;
}

export interface ShardMove {
  shard: number;
  from: string | null;
  to: string | null;
}

/** The moves that turn `current` ownership into `target`. */
export function planMoves(current: readonly (string | null)[], target: readonly (string | null)[]): ShardMove[] {
  const moves: ShardMove[] = [];
  for (let shard = 0; shard < target.length; shard++) {
    if ((current[shard] ?? null) !== target[shard]) moves.push({ shard, from: current[shard] ?? null, to: target[shard] });
  }
  return moves;
}
