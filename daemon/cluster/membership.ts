/**
 * Cluster membership and operator intent, kept in Redis.
 *
 * Keys (under the cluster prefix):
 * - `members`        SET of member ids that have announced themselves
 * - `member:<id>`    JSON record, expires after 3 heartbeat periods: membership,
 *                    what the balanced assignment is computed over
 * - `alive:<id>`     liveness, refreshed on the lease cadence and expiring well
 *                    within one lease TTL whatever the heartbeat period: a
 *                    member whose record is there but whose `alive` key is not
 *                    is a *suspect* (killed or frozen); peers take its shards
 *                    as its leases lapse, before its record expires
 * - `pins`           HASH member id → pinned ranges; survives the member, so
 *                    its shards are known to be orphans while it is gone
 * - `drained`        SET of drained member ids (`ops drain`)
 * - `overrides`      HASH shard → member id (`ops move`)
 * - channel `events` "changed" (recompute now) and "released:<shard>"
 *                    (a shard was let go: whoever wants it, acquire now)
 * Redis forgetting all this is harmless: members re-announce on the next
 * heartbeat (liveness on the next refresh) and operator intent falls back to
 * the balanced assignment.
 */
import { Redis } from 'ioredis';
import type { ClusterView, MemberView } from './assignment.js';
import { parseShardRanges } from '../config.js';

export interface MemberRecord extends MemberView {
  address: string;
  startedAtMs: number;
  lastSeenMs: number;
  ownedShards: number;
  /**
   * TTL of this member's `alive` key. Absent in records of members that do not
   * keep one (older versions): those are never suspects, only expire.
   */
  aliveTtlMs?: number;
}

export const CHANGED = 'changed';

/** KEYS[1] overrides hash; ARGV shard, the override to take back, the one before ('' = none). */
const RESTORE_OVERRIDE = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 1`;
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

  /** Writes the record (and, in the same MULTI, liveness: a record is never newer than its `alive` key). */
  async heartbeat(rec: MemberRecord, ttlMs: number, pinnedRanges: string): Promise<void> {
    const m = this.redis.multi();
    m.set(this.key(`member:${rec.id}`), JSON.stringify(rec), 'PX', ttlMs);
    if (rec.aliveTtlMs !== undefined) m.set(this.key(`alive:${rec.id}`), '1', 'PX', rec.aliveTtlMs);
    m.sadd(this.key('members'), rec.id);
    if (pinnedRanges) m.hset(this.key('pins'), rec.id, pinnedRanges);
    else m.hdel(this.key('pins'), rec.id);
    await m.exec();
  }

  /** Liveness only (cheap, on the lease cadence). */
  async refreshAlive(id: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(`alive:${id}`), '1', 'PX', ttlMs);
  }

  /** Of these member ids, the ones whose `alive` key is gone. */
  async lapsed(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const alive = await this.redis.mget(ids.map((id) => this.key(`alive:${id}`)));
    return new Set(ids.filter((_, i) => alive[i] === null));
  }

  async leave(id: string): Promise<void> {
    await this.redis.multi().del(this.key(`member:${id}`)).del(this.key(`alive:${id}`)).srem(this.key('members'), id).exec();
    await this.publish(CHANGED);
  }

  async publish(message: string): Promise<void> {
    await this.redis.publish(this.channel, message);
  }

  /**
   * Members whose record has not expired, and which of them are suspects
   * (they keep an `alive` key and it is gone). Records and liveness are read
   * in one MGET, so a member that just joined is never seen half-written.
   */
  async liveMembers(): Promise<{ records: MemberRecord[]; suspects: Set<string> }> {
    const ids = await this.redis.smembers(this.key('members'));
    if (ids.length === 0) return { records: [], suspects: new Set() };
    const got = await this.redis.mget([...ids.map((id) => this.key(`member:${id}`)), ...ids.map((id) => this.key(`alive:${id}`))]);
    const out: MemberRecord[] = [];
    const gone: string[] = [];
    const suspects = new Set<string>();
    ids.forEach((id, i) => {
      const r = got[i];
      if (!r) {
        gone.push(id);
        return;
      }
      const rec = memberRecordOf(id, r);
      if (!rec) return; // unreadable (another version's, or not ours): not a member we can plan with
      out.push(rec);
      if (rec.aliveTtlMs !== undefined && got[ids.length + i] === null) suspects.add(rec.id);
    });
    if (gone.length) await this.redis.srem(this.key('members'), ...gone);
    return { records: out.sort((a, b) => (a.id < b.id ? -1 : 1)), suspects };
  }

  /**
   * The cluster as seen now. `self`, when given, is never a suspect: a member
   * knows it is alive even when its own `alive` key lapsed (it then keeps its
   * shards as long as it keeps its leases, and peers cannot take them).
   */
  async view(shardCount: number, self?: string): Promise<{ view: ClusterView; records: MemberRecord[] }> {
    const [{ records, suspects }, pinsRaw, drained, overridesRaw] = await Promise.all([
      this.liveMembers(),
      this.redis.hgetall(this.key('pins')),
      this.redis.smembers(this.key('drained')),
      this.redis.hgetall(this.key('overrides')),
    ]);
    if (self !== undefined) suspects.delete(self);
    // Two members pinning one shard: a live one (record there, not a suspect) wins, then the smallest id.
    const live = new Set(records.filter((r) => !suspects.has(r.id)).map((r) => r.id));
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
    return { view: { shardCount, members: records, pins, drained: new Set(drained), overrides, suspects }, records };
  }

  async setOverride(shard: number, member: string): Promise<void> {
    await this.redis.hset(this.key('overrides'), String(shard), member);
    await this.publish(CHANGED);
  }

  /**
   * Puts a shard's override back as it was (`before` undefined: none), if it
   * is still `ours`: a rebalance or another move made meanwhile stands.
   */
  async restoreOverride(shard: number, ours: string, before: string | undefined): Promise<void> {
    await this.redis.eval(RESTORE_OVERRIDE, 1, this.key('overrides'), String(shard), ours, before ?? '');
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

/**
 * A member record as read from Redis, with every field the assignment reads
 * given a value: a record written by another version (or by hand) with a
 * field missing made every ListShards answer INTERNAL. Null when it is not
 * a record of this member at all.
 */
export function memberRecordOf(id: string, raw: string): MemberRecord | null {
  let v: Partial<Record<keyof MemberRecord, unknown>>;
  try {
    v = JSON.parse(raw) as typeof v;
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || v.id !== id) return null;
  const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  return {
    id,
    address: typeof v.address === 'string' ? v.address : '',
    startedAtMs: num(v.startedAtMs),
    lastSeenMs: num(v.lastSeenMs),
    ownedShards: num(v.ownedShards),
    pinned: Array.isArray(v.pinned) ? v.pinned.filter((s): s is number => Number.isInteger(s)) : [],
    adoptOrphans: v.adoptOrphans === true || v.standby === true, // as members write it: a standby adopts orphans
    standby: v.standby === true,
    ...(typeof v.aliveTtlMs === 'number' ? { aliveTtlMs: v.aliveTtlMs } : {}),
  };
}
