/**
 * Batches worker Completes: every Complete that arrives while a batch is being
 * written joins the next one, so Postgres sees one statement (one commit) per
 * batch instead of one per run. States: idle → gathering (GATHER_MS) →
 * writing one batch → idle; a batch written for longer than SLOW_BATCH_MS (a
 * slow refusal) lets a second one start beside it, so one stuck batch never
 * holds back every Complete. Each caller still gets its own outcome: OK, or
 * the refusal for a superseded delivery. An item the write could not make
 * for now (WRITE_AGAIN: its row locked by another transaction) is written
 * again GATHER_MS later, then every LOCKED_RETRY_MS, waiting in a timer, not
 * in a batch: the others of its batch are answered meanwhile.
 */
// One batch at a time while batches are quick: Completes that arrive while it
// is written join the next, so batches grow with the load instead of splitting
// it in two. At 5,000 runs/s this took Postgres from 75-79 % to 69-72 % of a
// core, with no change in fire lag (bench/README.md).
const MAX_IN_FLIGHT = 2;
const SLOW_BATCH_MS = 50;
const MAX_BATCH = 2000;
// A Complete that finds the batcher idle waits this long for others to join
// it. At 1 ms, 5,000 runs/s made ~600 Complete statements a second (a batch
// is written in ~1.5 ms); at 5 ms the bench's commits fell from 680 to 460 a
// second (bench/README.md, ninth session).
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
}

/** Writes one batch; per item, null (done), the error that item gets, or WRITE_AGAIN. */
export type WriteBatch<T> = (items: readonly T[]) => Promise<(Error | null | typeof WRITE_AGAIN)[]>;

export class CompleteBatcher<T> {
  private queue: Waiter<T>[] = [];
  /** The batches being written, by their start time (ms). */
  private readonly writing = new Set<{ startedAt: number }>();
  private scheduled = false;
  private slowCheck: NodeJS.Timeout | undefined;
  /** Items waiting LOCKED_RETRY_MS before they are written again. */
  private readonly waitingAgain = new Set<NodeJS.Timeout>();

  constructor(
    private readonly write: WriteBatch<T>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** One outcome per item, in order; resolves when all are written. */
  completeAll(items: readonly T[]): Promise<(Error | null)[]> {
    return Promise.all(items.map((i) => this.complete(i).then(() => null, (err: Error) => err)));
  }

  complete(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue({ item, resolve, reject, tries: 0 }));
  }

  /** Batches being written now. */
  get inFlight(): number {
    return this.writing.size;
  }

  /** Items waiting to be written again (their rows were locked). */
  get waitingToWriteAgain(): number {
    return this.waitingAgain.size;
  }

  private enqueue(w: Waiter<T>): void {
    this.queue.push(w);
    // Gather what arrives within GATHER_MS: one commit per run would be the
    // fire path's most expensive step.
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        this.flush();
      }, GATHER_MS);
    }
  }

  /**
   * The first time after GATHER_MS (a lock held for a moment: a heartbeat's),
   * then every LOCKED_RETRY_MS. Into the next batch that starts: not written
   * alone at once, as what waits for a batch is when that batch ends.
   */
  private writeAgain(w: Waiter<T>): void {
    w.tries += 1;
    const timer = setTimeout(
      () => {
        this.waitingAgain.delete(timer);
        this.queue.push(w);
        this.flush();
      },
      w.tries === 1 ? GATHER_MS : LOCKED_RETRY_MS,
    );
    // A daemon stopping does not wait for a lock someone else holds: the worker resends its answer elsewhere.
    timer.unref();
    this.waitingAgain.add(timer);
  }

  private flush(): void {
    while (this.queue.length > 0 && this.mayStart()) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const started = { startedAt: this.now() };
      this.writing.add(started);
      this.write(batch.map((w) => w.item))
        .then(
          (outcomes) =>
            outcomes.forEach((out, i) => (out === WRITE_AGAIN ? this.writeAgain(batch[i]) : out ? batch[i].reject(out) : batch[i].resolve())),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.writing.delete(started);
          this.flush();
        });
    }
    // Waiting behind one batch: look again when it turns slow.
    if (this.queue.length > 0 && this.writing.size === 1 && !this.slowCheck) {
      const [started] = this.writing;
      this.slowCheck = setTimeout(() => {
        this.slowCheck = undefined;
        this.flush();
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
