/**
 * The release gate: the second half of claim-ahead. The window lane fires a
 * run `claimAheadMs` before it is due so the fenced claim's round trip is off
 * the critical path; what the claim returns waits here, on its own one-timer
 * fast lane, and is handed to delivery exactly at its due time — never
 * before (monotonic deadline plus the wall-clock guard of FastLane).
 *
 * Staging goes one step further: a claimed run that a worker stream can
 * hold (its worker subscribed with stage_ahead_ms, and has credit) is handed
 * over at once with the time left until due, and the worker starts it then
 * (DeliveryHub.stage). The daemon's timer, the hand-off and the network are
 * then off the critical path too: only the worker's own timer is on it.
 * What no stream can hold now waits here as before.
 *
 * Owns the claimed-but-not-yet-due runs (take() removes one whose job was
 * cancelled meanwhile: it never goes out). They were claimed under a valid
 * fence, so they are released even if the shard is lost meanwhile (the new
 * owner sees them as fired and will not claim them again). If the daemon dies
 * here, at-least-once runs are redelivered when their lease expires;
 * at-most-once runs were recorded as delivered and are not.
 */
import type { FiredRunRow } from '../db/queries/columns.js';
import { FastLane } from '../fast/fast-lane.js';
import type { Clock } from '../fast/clock.js';

export class ReleaseGate {
  private readonly waiting = new Map<number, FiredRunRow>();
  private readonly lane: FastLane;

  constructor(
    private readonly clock: Clock,
    private readonly release: (run: FiredRunRow) => void,
    private readonly onError: (err: unknown, run: FiredRunRow) => void,
    /** Hands a run due in `startInMs` to a worker that holds it until then; false: none can now. @defaultValue none */
    private readonly stage: (run: FiredRunRow, startInMs: number) => boolean = () => false,
  ) {
    this.lane = new FastLane({
      clock,
      spin: false, // at 1,000 runs/s and more its deadlines are under a ms apart: spinning would never stop
      onFire: (entries) => {
        for (const e of entries) {
          const run = this.waiting.get(e.runId);
          if (!run) continue;
          this.waiting.delete(e.runId);
          try {
            this.release(run);
          } catch (err) {
            onError(err, run);
          }
        }
      },
    });
  }

  /** A claimed run: released now if due, else staged at a worker, else released at its due time. */
  admit(run: FiredRunRow): void {
    const left = run.due_at_ms <= this.clock.wallNow() ? 0 : this.lane.untilDue(run.due_at_ms);
    if (!(left > 0)) {
      this.release(run);
      return;
    }
    try {
      if (this.stage(run, left)) return;
    } catch (err) {
      // It may have gone out before the throw: holding it too could start it twice. Its lease brings it back.
      this.onError(err, run);
      return;
    }
    this.waiting.set(run.id, run);
    this.lane.offer({ runId: run.id, shard: run.shard, dueAtMs: run.due_at_ms, priority: run.priority });
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Takes a run back before its release (its job was cancelled meanwhile); undefined if not held here. */
  take(runId: number): FiredRunRow | undefined {
    const run = this.waiting.get(runId);
    if (run) this.waiting.delete(runId); // its lane entry fires into nothing
    return run;
  }

  /** Takes every run still held (a stopping daemon hands them back to Postgres). */
  takeAll(): FiredRunRow[] {
    const out = [...this.waiting.values()];
    this.waiting.clear();
    return out;
  }

  /** Resolves when every admitted run has been released (graceful stop), or after `maxMs`. */
  async drain(maxMs: number): Promise<void> {
    const until = performance.now() + maxMs;
    while (this.waiting.size > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 2));
  }

  start(): void {
    this.lane.start();
  }

  stop(): void {
    this.lane.stop();
    this.waiting.clear();
  }
}
