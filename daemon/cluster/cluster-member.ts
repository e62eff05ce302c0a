/**
 * This daemon's part in the cluster: announces itself (heartbeat), watches
 * the view, computes the assignment and tells the lease manager which shards
 * to own. States: joining → member (heartbeat every period; recompute on
 * every period and on every "changed" event) → leaving (record deleted,
 * "changed" published, then shards released one by one with "released:<n>"
 * so the new owners acquire at once instead of waiting a lease TTL).
 *
 * Liveness runs beside the heartbeat, on the lease's cadence rather than the
 * membership period: every TTL/6 the member refreshes its `alive` key (PX
 * TTL/2) and every min(100 ms, TTL/6) it reads the peers' keys. A peer whose
 * key lapsed is a suspect (see assignment.ts): recomputing then hands its
 * shards to their next owners, who are refused until its leases lapse and
 * acquire right then (ShardLeaseManager arms an attempt at the lease's PTTL).
 * Why TTL/2: a dead member extended its leases at most TTL/3 before dying, so
 * they lapse ≥ 2/3 TTL after; its `alive` key lapses ≤ TTL/2 after, and one
 * watch period later every peer knows: the takeover waits for the lease only,
 * whatever `--membership-interval-ms` is (its record, 3 periods, may outlive
 * it by seconds).
 *
 * Invariants:
 * - a member never suspects itself (it keeps what it holds while it can
 *   extend; only peers' opinions change);
 * - suspicion moves only the suspect's shards, so a wrong one costs at most
 *   refused acquire attempts, never a handoff between live members that
 *   keep their leases.
 *
 * While Redis cannot be read the last assignment stands; the leases decide
 * what may fire (a lease that cannot be extended is dropped).
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { assignShards, type ClusterView } from './assignment.js';
import { CHANGED, MembershipStore, releasedMessage, type MemberRecord } from './membership.js';

export interface ClusterMemberOptions {
  redis: Redis;
  prefix: string;
  memberId: string;
  address: string;
  /** Shards pinned to this member ("--shards"), and the flag text. */
  pinned: number[];
  pinnedRanges: string;
  adoptOrphans: boolean;
  standby: boolean;
  shardCount: number;
  intervalMs: number;
  log: Logger;
}

/** Liveness key TTL, as a share of the lease TTL (see the header). */
const ALIVE_TTL_SHARE = 1 / 2;
/** Refreshes per liveness TTL: two may fail or come late before peers suspect us. */
const ALIVE_REFRESHES_PER_TTL = 3;
/** Peers' liveness is read at most this far apart. */
const WATCH_MAX_MS = 100;

export interface LeaseControl {
  /** Lease TTL in ms: sets the liveness cadence. */
  readonly ttlMs: number;
  setDesired(shards: Iterable<number>): void;
  acquireNow(): Promise<void>;
  ownedShards(): number[];
}

export class ClusterMember {
  readonly store: MembershipStore;
  private subscriber: Redis | null = null;
  private timer: NodeJS.Timeout | null = null;
  private livenessTimer: NodeJS.Timeout | null = null;
  private readonly aliveTtlMs: number;
  private readonly aliveRefreshMs: number;
  private lastAliveRefresh = Number.NEGATIVE_INFINITY;
  /** A refresh of our `alive` key / a read of the peers' keys is in flight. */
  private refreshing = false;
  private watching = false;
  /** Peers suspected in the last view (sorted, for comparison). */
  private suspects: string[] = [];
  private records: MemberRecord[] = [];
  private lastView: ClusterView | null = null;
  private desired: number[] = [];
  private readonly startedAtMs = Date.now();
  private computing: Promise<void> | null = null;
  private again = false;
  private leaving = false;

  constructor(
    private readonly opts: ClusterMemberOptions,
    private readonly leases: LeaseControl,
  ) {
    this.store = new MembershipStore(opts.redis, opts.prefix);
    this.aliveTtlMs = Math.max(10, Math.floor(leases.ttlMs * ALIVE_TTL_SHARE));
    this.aliveRefreshMs = Math.max(5, Math.floor(this.aliveTtlMs / ALIVE_REFRESHES_PER_TTL));
  }

  get memberId(): string {
    return this.opts.memberId;
  }

  get members(): MemberRecord[] {
    return this.records;
  }

  get view(): ClusterView | null {
    return this.lastView;
  }

  async start(): Promise<void> {
    // The events connection queues its SUBSCRIBE until Redis is reachable, and
    // ioredis re-subscribes after every reconnect.
    const sub = this.opts.redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (err) => this.opts.log.debug({ err: String(err) }, 'cluster events connection error'));
    sub.on('message', (_ch: string, msg: string) => this.onEvent(msg));
    // ioredis re-subscribes by itself after a reconnect.
    sub.subscribe(this.store.channel).catch((err: unknown) => this.opts.log.warn({ err: String(err) }, 'cannot subscribe to cluster events'));
    this.timer = setInterval(() => this.recompute(), this.opts.intervalMs);
    this.livenessTimer = setInterval(() => this.watchLiveness(), Math.min(WATCH_MAX_MS, this.aliveRefreshMs));
    this.recompute();
    await this.computing;
    await this.store.publish(CHANGED).catch(() => undefined);
  }

  /** Leaves the cluster (peers recompute at once). Shards are released by the caller. */
  async leave(): Promise<void> {
    this.leaving = true;
    if (this.timer) clearInterval(this.timer);
    if (this.livenessTimer) clearInterval(this.livenessTimer);
    await this.computing;
    await this.store.leave(this.opts.memberId).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.livenessTimer) clearInterval(this.livenessTimer);
    this.subscriber?.disconnect();
    this.subscriber = null;
  }

  /** Called by the daemon after it let a shard go (handoff or shutdown). */
  announceRelease(shard: number): void {
    this.store.publish(releasedMessage(shard)).catch(() => undefined);
  }

  private onEvent(msg: string): void {
    if (this.leaving) return;
    if (msg === CHANGED) this.recompute();
    else if (msg.startsWith('released:')) {
      const shard = Number(msg.slice('released:'.length));
      if (this.desired.includes(shard)) void this.leases.acquireNow();
    }
  }

  /**
   * One liveness round: refresh our key when due, then read the peers' keys;
   * a change in who is suspected recomputes the assignment at once (the view
   * read there decides; this read only notices). The refresh never waits
   * behind a slow read of the peers (nor the other way round).
   */
  private watchLiveness(): void {
    if (this.leaving) return;
    const now = performance.now();
    if (!this.refreshing && now - this.lastAliveRefresh >= this.aliveRefreshMs) {
      this.refreshing = true;
      this.lastAliveRefresh = now;
      this.store
        .refreshAlive(this.opts.memberId, this.aliveTtlMs)
        .catch((err: unknown) => this.opts.log.debug({ err: String(err) }, 'liveness refresh failed (Redis away?)'))
        .finally(() => {
          this.refreshing = false;
        });
    }
    if (this.watching) return;
    this.watching = true;
    const peers = this.records.filter((r) => r.id !== this.opts.memberId && r.aliveTtlMs !== undefined).map((r) => r.id);
    this.store
      .lapsed(peers)
      .then((lapsed) => {
        if (!this.leaving && [...lapsed].sort().join(',') !== this.suspects.join(',')) this.recompute();
      })
      .catch((err: unknown) => this.opts.log.debug({ err: String(err) }, 'liveness read failed (Redis away?)'))
      .finally(() => {
        this.watching = false;
      });
  }

  recompute(): void {
    if (this.leaving) return;
    if (this.computing) {
      this.again = true;
      return;
    }
    this.computing = this.computeOnce()
      .catch((err: unknown) => this.opts.log.warn({ err: String(err) }, 'cluster view unavailable; keeping the last assignment'))
      .finally(() => {
        this.computing = null;
        if (this.again) {
          this.again = false;
          this.recompute();
        }
      });
  }

  private async computeOnce(): Promise<void> {
    const o = this.opts;
    const me: MemberRecord = {
      id: o.memberId,
      address: o.address,
      pinned: o.pinned,
      adoptOrphans: o.adoptOrphans || o.standby,
      standby: o.standby,
      startedAtMs: this.startedAtMs,
      lastSeenMs: Date.now(),
      ownedShards: this.leases.ownedShards().length,
      aliveTtlMs: this.aliveTtlMs,
    };
    await this.store.heartbeat(me, o.intervalMs * 3, o.pinnedRanges);
    this.lastAliveRefresh = performance.now();
    const { view, records } = await this.store.view(o.shardCount, o.memberId);
    if (this.leaving) return;
    this.records = records;
    this.lastView = view;
    const suspects = [...(view.suspects ?? [])].sort();
    if (suspects.join(',') !== this.suspects.join(',')) {
      o.log.info({ suspects, cleared: this.suspects.filter((id) => !suspects.includes(id)) }, 'suspected members changed (liveness lapsed)');
    }
    this.suspects = suspects;
    const target = assignShards(view);
    const mine = target.flatMap((owner, shard) => (owner === o.memberId ? [shard] : []));
    if (mine.length !== this.desired.length || mine.some((s, i) => s !== this.desired[i])) {
      o.log.info({ shards: mine.length, members: records.length }, 'assignment changed');
    }
    this.desired = mine;
    this.leases.setDesired(mine);
  }
}
