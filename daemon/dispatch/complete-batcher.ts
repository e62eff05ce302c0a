/**
 * Batches worker Completes: every Complete that arrives while a batch is being
 * written joins the next one, so Postgres sees one statement (one commit) per
 * batch instead of one per run. States: idle → gathering (until the oldest
 * queued item has waited GATHER_MS) → writing one batch, while the next
 * gathers → idle once nothing is queued or written;
 * a batch written for longer than SLOW_BATCH_MS (a
 * slow refusal) lets a second one start beside it, so one stuck batch never
 * holds back every Complete. Each caller still gets its own outcome: OK, or
 * the refusal for a superseded delivery. Items the write could not make
 * for now (WRITE_AGAIN: their rows locked by another transaction) are
 * written again together GATHER_MS later, then every LOCKED_RETRY_MS,
 * waiting in one timer per batch, not in a batch: the others of their batch
 * are answered meanwhile. An item that has waited WriteAgainPolicy.giveUpAfterMs,
 * or any once the batcher is closed (the daemon stopping), gets the policy's
 * error instead (UNAVAILABLE: its worker sends the Complete again). An item
 * whose outcome the write hands on as a promise (settled elsewhere: a Complete
 * that takes the workflow path) leaves with its batch, which is then done;
 * its caller waits for that promise, which close() does not settle.
 *
 * Invariant: a batch starts only once its oldest item has waited GATHER_MS,
 * or the queue holds MAX_BATCH, or it is started for items written again
 * (newer items then go with them): never straight after the batch before
 * it, which at 1,000 runs/s made batches of 2 and ~400 statements a second.
 * The gather timer only re-checks that rule, so one left armed for an item
 * that has gone is harmless. queue[0] is never younger than an item queued
 * after it, except items written again (they have waited GATHER_MS already).
 */
// One batch at a time while batches are quick: Completes that arrive while it
// is written join the next, so batches grow with the load instead of splitting
// it in two. At 5,000 runs/s this took Postgres from 75-79 % to 69-72 % of a
// core, with no change in fire lag (bench/README.md).
const MAX_IN_FLIGHT = 2;
const SLOW_BATCH_MS = 50;
const MAX_BATCH = 2000;
// A batch is written once its oldest Complete has waited this long for others
// to join it: a steady 1,000 runs/s makes ~145 Complete statements a second,
// against ~400 when batches went out back to back (bench/README.md, eleventh
// session). (The ninth session's 1 ms → 5 ms change, gathering only when idle:
// 5,000 runs/s commits 680 → 460 a second.)
// It costs a Complete's Ack up to 5 ms; a workflow step its Complete makes
// due fires up to 5 ms later, and a recurring job's next occurrence due within
// those 5 ms may find the run still running (its overlap policy then applies).
const GATHER_MS = 5;

// An item written again for the second time or later waits this long first.
const LOCKED_RETRY_MS = 100;

/** An item's outcome: write it again later (its row is locked by another transaction). */
export const WRITE_AGAIN = Symbol('write again');

interface Waiter<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** Times the write answered WRITE_AGAIN for it. */
  tries: number;
  /** When the write first answered WRITE_AGAIN for it. */
  againSince?: number;
  /** When it was queued (the batcher's clock). */
  queuedAt: number;
}

/** What becomes of items written again for long (WRITE_AGAIN). */
export interface WriteAgainPolicy<T> {
  /** After this long written again, an item gets giveUp's error. */
  giveUpAfterMs: number;
  giveUp: (item: T, waitedMs: number) => Error;
  /** Told at most every WARN_EVERY_MS while an item has been written again for WARN_AFTER_MS: how many wait, the longest wait. */
  warn?: (waiting: number, longestMs: number) => void;
}

/** The warning about items written again comes at most this often, and only once one has waited this long. */
const WARN_EVERY_MS = 10_000;
const WARN_AFTER_MS = 1_000;

/**
 * Writes one batch; per item, null (done), the error that item gets,
 * WRITE_AGAIN, or a promise of its outcome settled elsewhere (the batch is
 * done: its slot is free while that item waits).
 */
export type WriteBatch<T> = (items: readonly T[]) => Promise<(Error | null | typeof WRITE_AGAIN | Promise<Error | null>)[]>;

export class CompleteBatcher<T> {
  private queue: Waiter<T>[] = [];
  /** The batches being written, by their start time (ms). */
  private readonly writing = new Set<{ startedAt: number }>();
  private gatherTimer: NodeJS.Timeout | undefined;
  private slowCheck: NodeJS.Timeout | undefined;
  /** Items waiting before they are written again, one timer per batch they came from. */
  private readonly waitingAgain = new Set<{ timer: NodeJS.Timeout; waiters: Waiter<T>[] }>();
  private closed = false;
  private warnedAt = -Infinity;

  constructor(
    private readonly write: WriteBatch<T>,
    private readonly now: () => number = () => performance.now(),
    private readonly again: WriteAgainPolicy<T> = { giveUpAfterMs: Infinity, giveUp: () => new Error('not written') },
  ) {}

  /** One outcome per item, in order; resolves when all are written. */
  completeAll(items: readonly T[]): Promise<(Error | null)[]> {
    return Promise.all(items.map((i) => this.complete(i).then(() => null, (err: Error) => err)));
  }

  complete(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue({ item, resolve, reject, tries: 0, queuedAt: this.now() }));
  }

  /** Batches being written now. */
  get inFlight(): number {
    return this.writing.size;
  }

  /** Items waiting to be written again (their rows were locked). */
  get waitingToWriteAgain(): number {
    let n = 0;
    for (const w of this.waitingAgain) n += w.waiters.length;
    return n;
  }

  /** The daemon is stopping: items waiting to be written again, and any later, get the policy's error now. */
  close(): void {
    this.closed = true;
    for (const w of this.waitingAgain) {
      clearTimeout(w.timer);
      for (const waiter of w.waiters) waiter.reject(this.again.giveUp(waiter.item, this.now() - (waiter.againSince ?? this.now())));
    }
    this.waitingAgain.clear();
  }

  private enqueue(w: Waiter<T>): void {
    this.queue.push(w);
    this.flushWhenGathered();
  }

  /**
   * Flushes once the oldest queued item has waited GATHER_MS (one commit per
   * run would be the fire path's most expensive step), or at once if the
   * queue is a full batch; else arms the gather timer for that moment.
   */
  private flushWhenGathered(): void {
    if (this.queue.length === 0) return;
    const waited = this.now() - this.queue[0].queuedAt;
    if (waited >= GATHER_MS || this.queue.length >= MAX_BATCH) {
      this.flush();
      return;
    }
    // Armed for an item that has left early (with a slow batch's or a rewrite's) is harmless: the timer only re-checks.
    if (this.gatherTimer === undefined)
      this.gatherTimer = setTimeout(() => {
        this.gatherTimer = undefined;
        this.flushWhenGathered();
      }, GATHER_MS - waited);
  }

  /**
   * The items of one batch the write answered WRITE_AGAIN for: the first
   * time after GATHER_MS (a lock held for a moment: a heartbeat's), then
   * every LOCKED_RETRY_MS; together (copies of one delivery stay in one
   * batch, and share its outcome), with whatever else is queued then.
   */
  private writeAgain(ws: readonly Waiter<T>[]): void {
    const now = this.now();
    const first: Waiter<T>[] = [];
    const later: Waiter<T>[] = [];
    let longest = 0;
    for (const w of ws) {
      w.againSince ??= now;
      const waited = now - w.againSince;
      if (this.closed || waited >= this.again.giveUpAfterMs) w.reject(this.again.giveUp(w.item, waited));
      else (w.tries++ === 0 ? first : later).push(w);
      longest = Math.max(longest, waited);
    }
    this.requeueAfter(first, GATHER_MS);
    this.requeueAfter(later, LOCKED_RETRY_MS);
    // Not for a lock held a few ms (a heartbeat's, the hand-off record's): only one held for long.
    if (later.length > 0 && longest >= WARN_AFTER_MS && now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      this.again.warn?.(this.waitingToWriteAgain, longest);
    }
  }

  private requeueAfter(waiters: Waiter<T>[], ms: number): void {
    if (waiters.length === 0) return;
    const entry = {
      timer: setTimeout(() => {
        this.waitingAgain.delete(entry);
        // At the front: the queue stays oldest first (flushWhenGathered times it from queue[0]).
        this.queue.unshift(...waiters);
        this.flush();
      }, ms),
      waiters,
    };
    // Never what keeps a process alive: close() settles them at a stop.
    entry.timer.unref();
    this.waitingAgain.add(entry);
  }

  private flush(): void {
    while (this.queue.length > 0 && this.mayStart()) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const started = { startedAt: this.now() };
      this.writing.add(started);
      this.write(batch.map((w) => w.item))
        .then(
          (outcomes) => {
            const again: Waiter<T>[] = [];
            outcomes.forEach((out, i) => {
              const w = batch[i];
              if (out === WRITE_AGAIN) again.push(w);
              else if (out instanceof Promise) out.then((err) => (err ? w.reject(err) : w.resolve()), w.reject);
              else if (out) w.reject(out);
              else w.resolve();
            });
            if (again.length > 0) this.writeAgain(again);
          },
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.writing.delete(started);
          clearTimeout(this.slowCheck);
          this.slowCheck = undefined;
          this.flushWhenGathered();
        });
    }
    // Waiting behind one batch: look again when it turns slow.
    if (this.queue.length > 0 && this.writing.size === 1 && !this.slowCheck) {
      const [started] = this.writing;
      this.slowCheck = setTimeout(() => {
        this.slowCheck = undefined;
        this.flushWhenGathered();
      }, Math.max(0, started.startedAt + SLOW_BATCH_MS - this.now()) + 1);
    }
  }

  /** Idle: yes. One batch written: only once it has taken SLOW_BATCH_MS. */
  private mayStart(): boolean {
    if (this.writing.size === 0) return true;
    if (this.writing.size >= MAX_IN_FLIGHT) return false;
    const [started] = this.writing;
    return this.now() - started.startedAt >= SLOW_BATCH_MS;
  }
}
