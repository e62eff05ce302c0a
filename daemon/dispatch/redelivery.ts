/**
 * The redelivery reaper: every tick, runs of owned shards that were fired
 * AT_LEAST_ONCE and whose delivery lease expired (worker died, went silent,
 * or its stream closed) are re-claimed under the current fence with a new
 * delivery number and handed out again — same run, same idempotency key.
 * A run whose worker was asked to stop it (CancelJob) is not handed out
 * again: when its lease ends unanswered, it ends cancelled.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { EXPIRE_CANCELLED, REDELIVER_EXPIRED } from '../db/queries/dispatch.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { heldFences, type ShardFences } from '../coord/fence.js';

const BATCH = 1000;

export class RedeliveryReaper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly fences: ShardFences,
    private readonly deliver: (run: FiredRunRow) => void,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly intervalMs: number,
    /** Runs asked to stop that ended cancelled at their lease end (the hub frees their credit). */
    private readonly ended: (runIds: number[]) => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.intervalMs);
  }

  kick(): void {
    if (this.running) return;
    this.running = this.reap()
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'redelivery pass failed'))
      .finally(() => {
        this.running = null;
      });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  private async reap(): Promise<void> {
    const held = heldFences(this.fences);
    if (held.shards.length > 0) {
      const { rows } = await query<{ id: number }>(this.db, EXPIRE_CANCELLED, [held.shards, held.fences]);
      if (rows.length > 0) this.ended(rows.map((r) => r.id));
    }
    for (;;) {
      const { shards, fences } = heldFences(this.fences);
      if (shards.length === 0) return;
      const { rows } = await query<FiredRunRow>(this.db, REDELIVER_EXPIRED, [BATCH, shards, fences]);
      for (const run of rows) {
        this.metrics.redelivered.inc();
        this.deliver(run);
      }
      if (rows.length < BATCH) return;
    }
  }
}
