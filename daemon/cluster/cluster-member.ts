/**
 * This daemon's part in the cluster: announces itself (heartbeat), watches
 * the view, computes the assignment and tells the lease manager which shards
 * to own. States: joining → member (heartbeat every period; recompute on
 * every period and on every "changed" event) → leaving (record deleted,
 * "changed" published, then shards released one by one with "released:<n>"
 * so the new owners acquire at once instead of waiting a lease TTL).
 *
 * While Redis cannot be read the last assignment stands; the leases decide
 * what may fire (a lease that cannot be extended is dropped).
 */
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

export interface LeaseControl {
  setDesired(shards: Iterable<number>): void;
  acquireNow(): Promise<void>;
  ownedShards(): number[];
}

export class ClusterMember {
  readonly store: MembershipStore;
  private subscriber: Redis | null = null;
  private timer: NodeJS.Timeout | null = null;
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
    this.recompute();
    await this.computing;
    await this.store.publish(CHANGED).catch(() => undefined);
  }

  /** Leaves the cluster (peers recompute at once). Shards are released by the caller. */
  async leave(): Promise<void> {
    this.leaving = true;
    if (this.timer) clearInterval(this.timer);
    await this.computing;
    await this.store.leave(this.opts.memberId).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
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
    };
    await this.store.heartbeat(me, o.intervalMs * 3, o.pinnedRanges);
    const { view, records } = await this.store.view(o.shardCount);
    if (this.leaving) return;
    this.records = records;
    this.lastView = view;
    const target = assignShards(view);
    const mine = target.flatMap((owner, shard) => (owner === o.memberId ? [shard] : []));
    if (mine.length !== this.desired.length || mine.some((s, i) => s !== this.desired[i])) {
      o.log.info({ shards: mine.length, members: records.length }, 'assignment changed');
    }
    this.desired = mine;
    this.leases.setDesired(mine);
  }
}
