/**
 * The router: where every committed run goes — a scheduled run, a
 * reschedule, a retry, and later recurring occurrences and workflow steps.
 * A run's path never depends on which RPC made it. A request to stop a
 * running run (CancelJob) travels the same way to the shard's owner, which
 * holds the worker stream.
 *
 * - Our shard: offered to the local engine once the transaction committed
 *   (the engine's loader decides whether it is inside the window).
 * - Another daemon's shard, due within the window: `pg_notify` INSIDE the
 *   committing transaction, so the owner hears of it exactly when the row
 *   becomes visible, and never of a row that rolled back.
 * - Anything else: nothing; the owner's loader reads it when its window
 *   reaches it. The repair scan is the safety net for a lost notification.
 *
 * A workflow step due now on a shard we own need not wait for the heap and
 * a claim: the statement that creates its run fires it under our fence
 * (`firingFences`), and `deliverFired` hands it to delivery after commit.
 */
import type { Queryable } from '../db/pool.js';
import { publishCancels, publishNearDue } from '../slow/notifications.js';
import type { RunRef } from '../run-ref.js';
import type { FenceArrays } from '../coord/fence.js';
import type { FiredRunRow } from '../db/queries/columns.js';

export interface RouterOptions {
  schema: string;
  windowMs: number;
  wallNow: () => number;
  owns: (shard: number) => boolean;
  /** The local engine's door. */
  offerLocal: (run: RunRef) => void;
  /** Tell the worker running this run (on our shard) to stop it. */
  cancelLocal: (runId: number, reason: string) => void;
  /**
   * Runs a transaction may fire as it creates them: the fences to fire under
   * (shards whose lease is valid; none once the engine drains), and where a
   * run fired in a committed transaction goes (the release gate). Absent:
   * every new run is offered as scheduled.
   */
  firing?: { fences: () => FenceArrays; deliver: (run: FiredRunRow) => void };
}

/** Offers the runs this daemon owns; call it after COMMIT. */
export type AfterCommit = () => void;

export class RunRouter {
  constructor(private readonly opts: RouterOptions) {}

  /** The end of the window as of now: runs due by then on another daemon's shard need a notify. */
  horizon(): number {
    return this.opts.wallNow() + this.opts.windowMs;
  }

  /** Whether a run needs a notify (another daemon's shard, due by `horizon`); lets a batch plan its transaction per row without building refs. */
  isRemoteNearDue(shard: number, dueAtMs: number, horizon: number): boolean {
    return dueAtMs <= horizon && !this.opts.owns(shard);
  }

  /** Whether committing these runs needs a notify inside the transaction (else a single statement will do). */
  needsNotify(runs: readonly Pick<RunRef, 'shard' | 'dueAtMs'>[]): boolean {
    const horizon = this.horizon();
    return runs.some((r) => this.isRemoteNearDue(r.shard, r.dueAtMs, horizon));
  }

  /** Call inside the committing transaction with the runs it wrote. */
  async inTransaction(tx: Queryable, runs: readonly RunRef[]): Promise<AfterCommit> {
    // The horizon is taken after the write: a window scan racing the commit cannot miss a run.
    const horizon = this.horizon();
    const remote = runs.filter((r) => this.isRemoteNearDue(r.shard, r.dueAtMs, horizon));
    if (remote.length > 0) await publishNearDue(tx, this.opts.schema, remote);
    return () => this.afterCommit(runs);
  }

  /**
   * Runs marked cancel-requested in `tx`: the owner of each shard tells the
   * worker holding it. Ours after commit; others by `pg_notify` in `tx`.
   */
  async cancelInTransaction(tx: Queryable, runs: readonly { runId: number; shard: number }[], reason: string): Promise<AfterCommit> {
    const remote = runs.filter((r) => !this.opts.owns(r.shard));
    if (remote.length > 0) await publishCancels(tx, this.opts.schema, remote.map((r) => r.runId), reason);
    return () => {
      for (const r of runs) if (this.opts.owns(r.shard)) this.opts.cancelLocal(r.runId, reason);
    };
  }

  /** Fenced-statement parameters for firing new runs inside a transaction (empty arrays: fire none). */
  firingFences(): FenceArrays {
    return this.opts.firing?.fences() ?? { shards: [], fences: [] };
  }

  /** Runs fired by a transaction under `firingFences`; call after COMMIT. */
  deliverFired(runs: readonly FiredRunRow[]): void {
    const deliver = this.opts.firing?.deliver;
    if (deliver) for (const r of runs) deliver(r);
  }

  /** For runs committed by a statement that needed no notify (see needsNotify). */
  afterCommit(runs: readonly RunRef[]): void {
    for (const r of runs) if (this.opts.owns(r.shard)) this.opts.offerLocal(r);
  }
}
