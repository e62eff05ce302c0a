/**
 * Batches worker Completes: every Complete that arrives while a batch is being
 * written joins the next one, so Postgres sees one statement (one commit) per
 * batch instead of one per run. States: idle → gathering (GATHER_MS) →
 * writing one batch → idle; a batch written for longer than SLOW_BATCH_MS (a
 * row lock, a slow refusal) lets a second one start beside it, so one stuck
 * batch never holds back every Complete. Each caller still gets its own
 * outcome: OK, or the refusal for a superseded delivery.
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

interface Waiter<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Writes one batch; per item, null (done) or the error that item gets. */
export type WriteBatch<T> = (items: readonly T[]) => Promise<(Error | null)[]>;

export class CompleteBatcher<T> {
  private queue: Waiter<T>[] = [];
  /** The batches being written, by their start time (ms). */
  private readonly writing = new Set<{ startedAt: number }>();
  private scheduled = false;
  private slowCheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: WriteBatch<T>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** One outcome per item, in order; resolves when all are written. */
  completeAll(items: readonly T[]): Promise<(Error | null)[]> {
    return Promise.all(items.map((i) => this.complete(i).then(() => null, (err: Error) => err)));
  }

  complete(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      // Gather what arrives within GATHER_MS: one commit per run would be the
      // fire path's most expensive step.
      if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(() => {
          this.scheduled = false;
          this.flush();
        }, GATHER_MS);
      }
    });
  }

  /** Batches being written now. */
  get inFlight(): number {
    return this.writing.size;
  }

  private flush(): void {
    while (this.queue.length > 0 && this.mayStart()) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const started = { startedAt: this.now() };
      this.writing.add(started);
      this.write(batch.map((w) => w.item))
        .then(
          (outcomes) => outcomes.forEach((err, i) => (err ? batch[i].reject(err) : batch[i].resolve())),
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
