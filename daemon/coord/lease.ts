/**
 * Shard leases and fencing tokens: the coordination interface.
 *
 * A `LeaseBackend` grants a time-limited, exclusive lease on one shard and,
 * with it, a fencing token larger than any token ever issued for that shard.
 * Before `acquire` returns, the token is recorded in the Postgres `shards`
 * row by a conditional update that only moves it forward (invariant I-1), so
 * every fenced write the holder makes afterwards can be checked against it.
 *
 * Implementations: `redis-lease.ts` (production: redlock lease + INCR token,
 * safe when Redis restarts empty, I-2) and `pg-lease.ts` (embedded mode: lease
 * and token in the shards row). Both pass `test/integration/lease-conformance`.
 *
 * Lease timing is the caller's business (`shard-leases.ts` renews from its own
 * loop on the monotonic clock and drops the shard on the first failed extend).
 */
export interface ShardLease {
  readonly shard: number;
  /** Fencing token recorded in Postgres for this acquisition. */
  readonly fence: number;
  /** Monotonic time (performance.now()) until which the lease is known valid. */
  validUntilMono: number;
}

export interface LeaseBackend {
  readonly kind: 'redis' | 'postgres';
  /**
   * Tries to take the shard for `ttlMs`. Resolves null when another holder has
   * it. On success the returned fence is already recorded in Postgres.
   */
  acquire(shard: number, ttlMs: number): Promise<ShardLease | null>;
  /** Extends a held lease by `ttlMs` from now. False means the lease is lost: drop the shard. */
  extend(lease: ShardLease, ttlMs: number): Promise<boolean>;
  /** Gives the lease up so a peer can take the shard at once. Never throws. */
  release(lease: ShardLease): Promise<void>;
  /**
   * Optional: how long whoever holds `shard` now keeps it without another
   * extend, in ms by the store's clock (0: nobody holds it; null: unknown).
   * Lets a member that was refused try again the moment a dead holder's lease
   * runs out instead of on its next retry tick. Never throws.
   */
  heldForMs?(shard: number): Promise<number | null>;
  /** Closes connections owned by the backend. */
  close(): Promise<void>;
}
