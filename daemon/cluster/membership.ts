/**
 * Cluster membership and operator intent, kept in Redis.
 *
 * Keys (under the cluster prefix):
 * - `members`        SET of member ids that have announced themselves
 * - `member:<id>`    JSON record, expires after 3 heartbeat periods (liveness)
 * - `pins`           HASH member id → pinned ranges; survives the member, so
 *                    its shards are known to be orphans while it is gone
 * - `drained`        SET of drained member ids (`ops drain`)
 * - `overrides`      HASH shard → member id (`ops move`)
 * - channel `events` "changed" (recompute now) and "released:<shard>"
 *                    (a shard was let go: whoever wants it, acquire now)
 * Redis forgetting all this is harmless: members re-announce on the next
 * heartbeat and operator intent falls back to the balanced assignment.
 */
import { Redis } from 'ioredis';
import type { ClusterView, MemberView } from './assignment.js';
import { parseShardRanges } from '../config.js';

export interface MemberRecord extends MemberView {
  address: string;
  startedAtMs: number;
  lastSeenMs: number;
  ownedShards: number;
}

export const CHANGED = 'changed';
export const releasedMessage = (shard: number): string => `released:${shard}`;

export class MembershipStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  get channel(): string {
    return `${this.prefix}events`;
  }

  private key(name: string): string {
    return `${this.prefix}${name}`;
  }

  async heartbeat(rec: MemberRecord, ttlMs: number, pinnedRanges: string): Promise<void> {
    const m = this.redis.multi();
    m.set(this.key(`member:${rec.id}`), JSON.stringify(rec), 'PX', ttlMs);
    m.sadd(this.key('members'), rec.id);
    if (pinnedRanges) m.hset(this.key('pins'), rec.id, pinnedRanges);
    else m.hdel(this.key('pins'), rec.id);
    await m.exec();
  }

  async leave(id: string): Promise<void> {
    await this.redis.multi().del(this.key(`member:${id}`)).srem(this.key('members'), id).exec();
    await this.publish(CHANGED);
  }

  async publish(message: string): Promise<void> {
    await this.redis.publish(this.channel, message);
  }

  async liveMembers(): Promise<MemberRecord[]> {
    const ids = await this.redis.smembers(this.key('members'));
    if (ids.length === 0) return [];
    const recs = await this.redis.mget(ids.map((id) => this.key(`member:${id}`)));
    const out: MemberRecord[] = [];
    const gone: string[] = [];
    recs.forEach((r, i) => {
      if (r) out.push(JSON.parse(r) as MemberRecord);
      else gone.push(ids[i]);
    });
    if (gone.length) await this.redis.srem(this.key('members'), ...gone);
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async view(shardCount: number): Promise<{ view: ClusterView; records: MemberRecord[] }> {
    const [records, pinsRaw, drained, overridesRaw] = await Promise.all([
      this.liveMembers(),
      this.redis.hgetall(this.key('pins')),
      this.redis.smembers(this.key('drained')),
      this.redis.hgetall(this.key('overrides')),
    ]);
    // Two members pinning one shard: a live one wins, then the smallest id (deterministic everywhere).
    const live = new Set(records.map((r) => r.id));
    const rank = (id: string): string => `${live.has(id) ? 0 : 1}${id}`;
    const pins = new Map<number, string>();
    for (const [member, ranges] of Object.entries(pinsRaw).sort(([a], [b]) => (rank(a) < rank(b) ? -1 : 1))) {
      try {
        for (const s of parseShardRanges(ranges, shardCount)) if (!pins.has(s)) pins.set(s, member);
      } catch {
        /* a pin from a different shard count: ignore */
      }
    }
    const overrides = new Map<number, string>();
    for (const [shard, member] of Object.entries(overridesRaw)) overrides.set(Number(shard), member);
    return { view: { shardCount, members: records, pins, drained: new Set(drained), overrides }, records };
  }

  async setOverride(shard: number, member: string): Promise<void> {
    await this.redis.hset(this.key('overrides'), String(shard), member);
    await this.publish(CHANGED);
  }

  async clearOverrides(): Promise<void> {
    await this.redis.del(this.key('overrides'));
    await this.publish(CHANGED);
  }

  async setDrained(member: string, drained: boolean): Promise<void> {
    if (drained) await this.redis.sadd(this.key('drained'), member);
    else await this.redis.srem(this.key('drained'), member);
    // Operator moves onto a drained member no longer apply.
    if (drained) {
      const overrides = await this.redis.hgetall(this.key('overrides'));
      const stale = Object.entries(overrides).filter(([, m]) => m === member).map(([s]) => s);
      if (stale.length) await this.redis.hdel(this.key('overrides'), ...stale);
    }
    await this.publish(CHANGED);
  }
}
