/**
 * A background pass run every `intervalMs` and on demand (`kick`), never two
 * at once: a kick during a pass runs one more right after it. Used by the
 * engine's passes over owned shards (the materialiser, the workflow repair).
 *
 * States: stopped → started (start) → stopped (stop waits for the pass in
 * flight). Invariant: at most one pass runs; a pass that fails is logged and
 * the next one retries.
 */
import type { Logger } from '../log.js';

export class PeriodicPass {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private halted = true;

  constructor(
    private readonly what: string,
    private readonly intervalMs: number,
    private readonly pass: () => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** True once stopped: a long pass checks it between batches. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Starts the timer; `now` also runs a first pass at once. */
  start(now: boolean): void {
    this.halted = false;
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    if (now) this.kick();
  }

  async stop(): Promise<void> {
    this.halted = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Run a pass now (or right after the one in flight). */
  kick(): void {
    if (this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err: unknown) => this.log.warn({ err: String(err) }, `${this.what} pass failed; next pass retries`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }
}
