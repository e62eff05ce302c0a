/**
 * The claim: turns runs popped from the fast lane into fired runs, with one
 * fenced, conditional UPDATE per tick for all shards (I-1, I-2 of DESIGN.md).
 * Only what the claim returns is delivered.
 *
 * A popped run the claim did not return is one of: cancelled, already fired,
 * rescheduled later, or on a shard whose fence moved on. The last means
 * ownership is lost: the shard is dropped and nothing more fires for it. Runs
 * still scheduled are offered back (a reschedule the notification missed).
 * A claim that errors (Postgres away) offers its runs back after a pause: an
 * unknown outcome is safe, since a second claim of a fired run returns nothing.
 */
import type { Db } from '../db/pool.js';
import { query, withClient } from '../db/pool.js';
import { CLAIM_RUNS } from '../db/queries/dispatch.js';
import { SCHEDULED_STATUS, SHARD_FENCES, type WindowRow } from '../db/queries/window.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { NearDueRun } from '../slow/notifications.js';

export interface ShardFences {
  fenceOf(shard: number): number | undefined;
  /** Held and provably valid (lease not past its monotonic validity). */
  isValid(shard: number): boolean;
  drop(shard: number, reason: string): void;
}

export interface ClaimDeps {
  db: Db;
  fences: ShardFences;
  deliver: (run: FiredRunRow) => void;
  /** Puts runs back in the window (they are still scheduled). */
  reoffer: (run: NearDueRun) => void;
  metrics: Metrics;
  log: Logger;
  wallNow: () => number;
}

const RETRY_AFTER_ERROR_MS = 250;

export class Claimer {
  private inFlight = 0;

  constructor(private readonly deps: ClaimDeps) {}

  get claimsInFlight(): number {
    return this.inFlight;
  }

  /** Called from the timer with everything due now. Must stay cheap: the write is async. */
  fire(entries: readonly NearDueRun[], firedAtWallMs: number): void {
    const ids: number[] = [];
    const shardSet = new Map<number, number>();
    const runs: NearDueRun[] = [];
    for (const e of entries) {
      const fence = this.deps.fences.fenceOf(e.shard);
      if (fence === undefined) continue;
      if (!this.deps.fences.isValid(e.shard)) {
        this.deps.fences.drop(e.shard, 'lease validity lapsed');
        continue;
      }
      this.deps.metrics.timerLag.observe(Math.max(0, firedAtWallMs - e.dueAtMs));
      ids.push(e.runId);
      shardSet.set(e.shard, fence);
      runs.push(e);
    }
    if (ids.length === 0) return;
    this.inFlight++;
    void this.claim(ids, shardSet, runs, firedAtWallMs).finally(() => this.inFlight--);
  }

  private async claim(ids: number[], fences: Map<number, number>, runs: NearDueRun[], firedAtWallMs: number): Promise<void> {
    const shards = [...fences.keys()];
    let claimed: FiredRunRow[];
    try {
      // The fire time is taken once a connection is in hand, so a wait for the
      // pool (or for Postgres to come back) shows in the recorded lag.
      ({ rows: claimed } = await withClient(this.deps.db, (c) => {
        const at = Math.floor(Math.max(firedAtWallMs, this.deps.wallNow()));
        return query<FiredRunRow>(c, CLAIM_RUNS, [ids, shards, shards.map((s) => fences.get(s)), at]);
      }));
    } catch (err) {
      this.deps.log.warn({ err: String(err), runs: ids.length }, 'claim failed; runs go back to the window');
      setTimeout(() => runs.forEach((r) => this.deps.reoffer(r)), RETRY_AFTER_ERROR_MS);
      return;
    }
    const now = this.deps.wallNow();
    for (const run of claimed) {
      this.deps.metrics.fired.inc();
      this.deps.metrics.fireLag.observe(Math.max(0, now - run.due_at_ms));
      this.deps.deliver(run);
    }
    if (claimed.length < ids.length) {
      const got = new Set(claimed.map((r) => r.id));
      await this.explainMisses(runs.filter((r) => !got.has(r.runId)), fences).catch((err: unknown) =>
        this.deps.log.warn({ err: String(err) }, 'could not check claim misses'),
      );
    }
  }

  private async explainMisses(missed: NearDueRun[], fences: Map<number, number>): Promise<void> {
    this.deps.metrics.claimMisses.inc(missed.length);
    const shards = [...new Set(missed.map((m) => m.shard))];
    const { rows } = await query<{ shard: number; fence: number }>(this.deps.db, SHARD_FENCES, [shards]);
    const stale = new Set<number>();
    for (const r of rows) {
      if (r.fence !== fences.get(r.shard)) {
        stale.add(r.shard);
        this.deps.log.warn({ shard: r.shard, fence: fences.get(r.shard), postgresFence: r.fence }, 'claim refused: fence is stale');
        this.deps.fences.drop(r.shard, 'stale fence');
      }
    }
    const maybe = missed.filter((m) => !stale.has(m.shard));
    if (maybe.length === 0) return;
    const { rows: still } = await query<WindowRow>(this.deps.db, SCHEDULED_STATUS, [maybe.map((m) => m.runId)]);
    for (const r of still) this.deps.reoffer({ runId: r.id, shard: r.shard, dueAtMs: r.due_at_ms, priority: r.priority });
  }
}
