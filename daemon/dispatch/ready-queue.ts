/**
 * Claimed runs of one queue waiting for worker credit, handed out best
 * first: higher priority first, then earlier due time, then lower run id
 * (equal priority keeps due order). A run is held at most once; replacing or
 * deleting it leaves a stale heap entry that is skipped when it surfaces.
 *
 * Invariant: every run in `byId` has exactly one live heap entry (the one
 * whose object is `byId.get(id)`); `size` counts `byId`.
 */
import { Heap } from 'heap-js';
import type { FiredRunRow } from '../db/queries/columns.js';

const better = (a: FiredRunRow, b: FiredRunRow): number => b.priority - a.priority || a.due_at_ms - b.due_at_ms || a.id - b.id;

export class ReadyQueue {
  private readonly byId = new Map<number, FiredRunRow>();
  private readonly order = new Heap<FiredRunRow>(better);

  get size(): number {
    return this.byId.size;
  }

  get(runId: number): FiredRunRow | undefined {
    return this.byId.get(runId);
  }

  set(run: FiredRunRow): void {
    this.byId.set(run.id, run);
    this.order.push(run);
  }

  delete(runId: number): boolean {
    return this.byId.delete(runId);
  }

  values(): IterableIterator<FiredRunRow> {
    return this.byId.values();
  }

  /** The best run, left in place; undefined when empty. */
  peek(): FiredRunRow | undefined {
    for (;;) {
      const top = this.order.peek();
      if (top === undefined) return undefined;
      if (this.byId.get(top.id) === top) return top;
      this.order.pop(); // a stale entry: drop it
    }
  }

  /** Takes the best run out, or undefined when empty. */
  shift(): FiredRunRow | undefined {
    for (;;) {
      const top = this.order.pop();
      if (top === undefined) return undefined;
      if (this.byId.get(top.id) === top) {
        this.byId.delete(top.id);
        return top;
      }
    }
  }
}
