/**
 * Runs of one queue waiting their turn, taken best first: higher priority
 * first, then earlier due time, then lower run id (equal priority keeps due
 * order). `ReadyQueue`: claimed runs waiting for worker credit (the hub);
 * `HeldQueue`: due runs the claim left for their queue's room (the claimer).
 * A run is held at most once; replacing or deleting it leaves a stale heap
 * entry that is skipped when it surfaces.
 *
 * Invariant: every run in `byId` has exactly one live heap entry (the one
 * whose object is `byId.get(id)`); `size` counts `byId`.
 */
import { Heap } from 'heap-js';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { RunRef } from '../run-ref.js';

class BestFirst<T> {
  private readonly byId = new Map<number, T>();
  private readonly order: Heap<T>;

  constructor(
    private readonly idOf: (t: T) => number,
    better: (a: T, b: T) => number,
  ) {
    this.order = new Heap<T>(better);
  }

  get size(): number {
    return this.byId.size;
  }

  get(runId: number): T | undefined {
    return this.byId.get(runId);
  }

  set(run: T): void {
    this.byId.set(this.idOf(run), run);
    this.order.push(run);
  }

  delete(runId: number): boolean {
    return this.byId.delete(runId);
  }

  values(): IterableIterator<T> {
    return this.byId.values();
  }

  /** The best run, left in place; undefined when empty. */
  peek(): T | undefined {
    for (;;) {
      const top = this.order.peek();
      if (top === undefined) return undefined;
      if (this.byId.get(this.idOf(top)) === top) return top;
      this.order.pop(); // a stale entry: drop it
    }
  }

  /** Takes the best run out, or undefined when empty. */
  shift(): T | undefined {
    for (;;) {
      const top = this.order.pop();
      if (top === undefined) return undefined;
      const id = this.idOf(top);
      if (this.byId.get(id) === top) {
        this.byId.delete(id);
        return top;
      }
    }
  }
}

const betterFired = (a: FiredRunRow, b: FiredRunRow): number => b.priority - a.priority || a.due_at_ms - b.due_at_ms || a.id - b.id;

/** Claimed runs of one queue waiting for worker credit. */
export class ReadyQueue extends BestFirst<FiredRunRow> {
  constructor() {
    super((r) => r.id, betterFired);
  }
}

/** A due run the claim left scheduled for its queue's room. */
export interface HeldRun extends RunRef {
  queue: string;
}

const betterHeld = (a: HeldRun, b: HeldRun): number => b.priority - a.priority || a.dueAtMs - b.dueAtMs || a.runId - b.runId;

/** Due runs of one queue held for its room: they go to the claim best first, as the hub hands runs out. */
export class HeldQueue extends BestFirst<HeldRun> {
  constructor() {
    super((r) => r.runId, betterHeld);
  }
}
