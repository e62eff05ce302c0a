/**
 * The redelivery reaper: every tick, runs of owned shards that were fired
 * AT_LEAST_ONCE and whose delivery lease expired (worker died, went silent,
 * or its stream closed) are re-claimed under the current fence with a new
 * delivery number and handed out again — same run, same idempotency key.
 * A run whose worker was asked to stop it (CancelJob) is not handed out
 * again: when its lease ends unanswered, it ends cancelled. A workflow step
 * delivered AT_MOST_ONCE and not answered within its lease is not handed out
 * again either: it ends dead (a dead letter), and the workflow repair pass
 * fails the step and cascades.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { EXPIRE_CANCELLED, EXPIRE_UNANSWERED_STEPS, REDELIVER_EXPIRED } from '../db/queries/dispatch.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { heldFences, type ShardFences } from '../coord/fence.js';
import { plainArray } from '../scheduling/pg-arrays.js';

const BATCH = 1000;

export class RedeliveryReaper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Stopped: kicks (a stream closed) start no pass. */
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly fences: ShardFences,
    private readonly deliver: (run: FiredRunRow) => void,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly intervalMs: number,
    /** Runs that ended at their lease end without a redelivery: asked to stop (cancelled), or unanswered at-most-once steps (dead). The hub frees their credit. */
    private readonly ended: (runIds: number[]) => void = () => undefined,
    /** Unanswered at-most-once steps ended dead: their workflow runs have a step to fail. */
    private readonly stepsDied: () => void = () => undefined,
    /** Runs held here unsent (the hub's): their expired lease restarts at the hand-out, they are not redelivered. */
    private readonly unsent: () => number[] = () => [],
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.intervalMs);
  }

  kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.reap()
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'redelivery pass failed'))
      .finally(() => {
        this.running = null;
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private async reap(): Promise<void> {
    const held = heldFences(this.fences);
    if (held.shards.length > 0) {
      const { rows } = await query<{ id: number }>(this.db, EXPIRE_CANCELLED, [held.shards, held.fences]);
      if (rows.length > 0) this.ended(rows.map((r) => r.id));
      const dead = await query<{ id: number }>(this.db, EXPIRE_UNANSWERED_STEPS, [held.shards, held.fences, BATCH]);
      if (dead.rows.length > 0) {
        const ids = dead.rows.map((r) => r.id);
        this.metrics.failed.inc({ outcome: 'dead' }, ids.length);
        this.log.warn({ runIds: ids.slice(0, 20), runs: ids.length }, 'run is dead (dead letter): at-most-once workflow step not answered within its lease');
        this.ended(ids);
        this.stepsDied();
      }
    }
    for (;;) {
      const { shards, fences } = heldFences(this.fences);
      if (shards.length === 0) return;
      const { rows } = await query<FiredRunRow>(this.db, REDELIVER_EXPIRED, [BATCH, shards, fences, plainArray(this.unsent())]);
      for (const run of rows) {
        this.metrics.redelivered.inc();
        this.deliver(run);
      }
      if (rows.length < BATCH) return;
    }
  }
}
