/**
 * Operator moves: move a shard, drain a member, rebalance. Each writes the
 * operator's intent to the membership store and publishes "changed"; every
 * member recomputes the assignment, the old owner stops firing and releases,
 * the new owner acquires a higher fence and rebuilds the window. The call then
 * waits (bounded) until Postgres shows the new owners.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { assignShards, planMoves, type ClusterView, type ShardMove } from './assignment.js';
import type { ClusterMember } from './cluster-member.js';

const OWNERS = `SELECT shard, owner FROM shards ORDER BY shard`;
const POLL_MS = 10;

export class ClusterOperations {
  constructor(
    private readonly db: Db,
    private readonly cluster: ClusterMember,
    private readonly shardCount: number,
  ) {}

  async currentOwners(): Promise<(string | null)[]> {
    const { rows } = await query<{ shard: number; owner: string | null }>(this.db, OWNERS);
    const out: (string | null)[] = new Array<string | null>(this.shardCount).fill(null);
    for (const r of rows) out[r.shard] = r.owner;
    return out;
  }

  private async freshView(): Promise<ClusterView> {
    return (await this.cluster.store.view(this.shardCount, this.cluster.memberId)).view;
  }

  private requireLive(view: ClusterView, member: string, field: string): void {
    if (!view.members.some((m) => m.id === member)) throw invalidArgument(field, `"${member}" is not a live member`);
  }

  /** A move onto a suspect would never complete: the assignment hands its shards on. */
  private requireResponsive(view: ClusterView, member: string, field: string): void {
    if (view.suspects?.has(member)) throw failedPrecondition(`member "${member}" stopped refreshing its liveness (killed or frozen?); ${field} must be a responsive member`);
  }

  async move(shard: number, to: string, timeoutMs: number): Promise<{ move: ShardMove; handoffMs: number }> {
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.shardCount) throw invalidArgument('shard', `must be 0..${this.shardCount - 1}`);
    const view = await this.freshView();
    this.requireLive(view, to, 'to_member');
    this.requireResponsive(view, to, 'to_member');
    if (view.drained.has(to)) throw failedPrecondition(`member "${to}" is drained; undo the drain first`);
    const from = (await this.currentOwners())[shard];
    const t0 = performance.now();
    const before = view.overrides.get(shard);
    await this.cluster.store.setOverride(shard, to);
    const done = await this.waitFor([{ shard, from, to }], timeoutMs);
    if (!done) {
      // Refused, so withdrawn: left in place, the move happened later, after the caller was told it failed.
      await this.cluster.store.restoreOverride(shard, to, before);
      throw failedPrecondition(`shard ${shard} did not reach "${to}" within ${timeoutMs} ms; the move is withdrawn (check the member's log)`);
    }
    return { move: { shard, from, to }, handoffMs: performance.now() - t0 };
  }

  async drain(member: string, undo: boolean, timeoutMs: number): Promise<{ moves: ShardMove[]; completed: boolean }> {
    if (!member) throw invalidArgument('member_id', 'is required');
    const view = await this.freshView();
    if (!undo && !view.members.some((m) => m.id === member)) this.requireLive(view, member, 'member_id');
    // Undo of a drain nobody set, for a member nobody knows: a typo, not a no-op.
    if (undo && !view.drained.has(member) && !view.members.some((m) => m.id === member)) throw notFound(`member "${member}"`);
    const drained = new Set(view.drained);
    if (undo) drained.delete(member);
    else drained.add(member);
    const target = assignShards({ ...view, drained });
    // Draining the last member that can own shards would stop every run from firing.
    const unowned = (owners: readonly (string | null)[]): number => owners.filter((o) => o === null).length;
    if (!undo && unowned(target) > unowned(assignShards(view)))
      throw failedPrecondition(`draining "${member}" would leave ${unowned(target)} shards with no member to own them (no other live, undrained member); start a member or undo a drain first`);
    const moves = planMoves(await this.currentOwners(), target);
    await this.cluster.store.setDrained(member, !undo);
    return { moves, completed: await this.waitFor(moves, timeoutMs) };
  }

  async rebalance(dryRun: boolean, timeoutMs: number): Promise<{ moves: ShardMove[]; executed: boolean; completed: boolean; perMember: Record<string, number> }> {
    const view = await this.freshView();
    const target = assignShards({ ...view, overrides: new Map() });
    const moves = planMoves(await this.currentOwners(), target);
    const perMember: Record<string, number> = Object.fromEntries(view.members.map((m) => [m.id, 0]));
    for (const owner of target) if (owner) perMember[owner] = (perMember[owner] ?? 0) + 1;
    if (dryRun) return { moves, executed: false, completed: false, perMember };
    await this.cluster.store.clearOverrides();
    return { moves, executed: true, completed: await this.waitFor(moves, timeoutMs), perMember };
  }

  /** Polls Postgres until every move's shard is owned by its target. */
  private async waitFor(moves: readonly ShardMove[], timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const owners = await this.currentOwners();
      if (moves.every((m) => owners[m.shard] === m.to)) return true;
      if (performance.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}
