import { performance } from 'node:perf_hooks';
import { query, type Db } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { LeaseBackend, ShardLease } from './lease.js';
import { PG_ACQUIRE_LEASE, PG_EXTEND_LEASE, RELEASE_SHARD, type FenceRow } from './fence-queries.js';

/**
 * Postgres lease backend (embedded / single-node mode).
 *
 * Owns nothing but a reference to its pool (`leaseDb`, the caller's). The
 * lease lives in the `shards` row: `owner` + `lease_expires_at`, judged by
 * Postgres's own `now()`, so member clocks never need to agree. States of a row: free (owner null or
 * lease expired) → held (owner, fence F, expiry in the future) → free again by
 * release or expiry.
 *
 * Invariants:
 * - acquire bumps `fence` in the same statement that takes the row, so the
 *   token is recorded in Postgres by construction and only moves forward;
 * - a row already owned by the same member id is re-taken at once with a new,
 *   higher fence (a restarted daemon does not wait out its own lease);
 * - extend and release are conditional on the fence: a superseded
 *   acquisition can neither keep nor free the row;
 * - no method throws: an unreachable database means "no lease" (null/false);
 * - every statement runs on `leaseDb`, a pool no API query uses: a renewal
 *   never queues behind client traffic (a read storm on a shared pool once
 *   expired every lease of a single-node daemon).
 */

/**
 * Share of the TTL we trust locally. The lease was set by Postgres after we
 * sent the statement, so `start + ttl` is already conservative; the margin
 * absorbs clock-rate drift and timer lateness.
 */
const VALIDITY_FACTOR = 0.9;

export interface PostgresLeaseOptions {
  /**
   * Pool for lease statements only (acquire, extend, release) — small (2 is
   * plenty) and never shared with API queries, so renewals cannot wait behind
   * client traffic. Not closed by the backend.
   */
  leaseDb: Db;
  /** This daemon's member id, written to `shards.owner`. */
  memberId: string;
  log?: Logger;
}

export class PostgresLeaseBackend implements LeaseBackend {
  readonly kind = 'postgres' as const;
  private readonly leaseDb: Db;
  private readonly memberId: string;
  private readonly log: Logger | undefined;

  constructor(opts: PostgresLeaseOptions) {
    this.leaseDb = opts.leaseDb;
    this.memberId = opts.memberId;
    this.log = opts.log;
  }

  async acquire(shard: number, ttlMs: number): Promise<ShardLease | null> {
    const start = performance.now();
    try {
      const { rows } = await query<FenceRow>(this.leaseDb, PG_ACQUIRE_LEASE, [shard, this.memberId, Math.ceil(ttlMs)]);
      if (rows.length === 0) return null;
      return { shard, fence: rows[0].fence, validUntilMono: start + ttlMs * VALIDITY_FACTOR };
    } catch (err) {
      this.log?.warn({ err, shard }, 'pg lease: acquire failed');
      return null;
    }
  }

  async extend(lease: ShardLease, ttlMs: number): Promise<boolean> {
    const start = performance.now();
    try {
      const { rows } = await query<FenceRow>(this.leaseDb, PG_EXTEND_LEASE, [lease.shard, lease.fence, this.memberId, Math.ceil(ttlMs)]);
      if (rows.length === 0) return false;
      lease.validUntilMono = start + ttlMs * VALIDITY_FACTOR;
      return true;
    } catch (err) {
      this.log?.warn({ err, shard: lease.shard }, 'pg lease: extend failed');
      return false;
    }
  }

  async release(lease: ShardLease): Promise<void> {
    lease.validUntilMono = 0;
    try {
      await query(this.leaseDb, RELEASE_SHARD, [lease.shard, lease.fence]);
    } catch (err) {
      this.log?.warn({ err, shard: lease.shard }, 'pg lease: release failed (the lease will expire)');
    }
  }

  /** The pool belongs to the caller: nothing to close. */
  async close(): Promise<void> {}
}
