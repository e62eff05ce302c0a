/**
 * RunHeap — the in-window runs of every owned shard, ordered by monotonic
 * deadline.
 *
 * Owns: one heap-js binary heap of nodes, a `Map<runId, node>` of the live
 * ones, and a per-shard count of live nodes.
 *
 * Lazy deletion: heap-js's `remove()` walks the whole array (~35 ms at 50k
 * entries), so nothing is ever removed from the heap in place. A node is live
 * exactly when the live map points at that very object; a cancelled or
 * replaced node simply stops being pointed at (a tombstone) and is discarded
 * when it reaches the top. When tombstones outnumber live nodes the heap is
 * rebuilt from the live map (O(live), amortised over the removals that
 * produced the tombstones), so the heap array stays within 2x of live.
 *
 * Invariants:
 * - `size` === live map size === sum of per-shard counts.
 * - tombstones <= size after every call.
 * - peek/popDue never return a tombstone.
 * - The heap owns its nodes (push copies the caller's object), so nobody can
 *   change a deadline behind the heap's back; `rebase` is the only way.
 */
import { Heap } from 'heap-js';

export interface WindowEntry {
  runId: number;
  shard: number;
  /** Due time, wall-clock epoch ms (as stored in Postgres). */
  dueAtMs: number;
  /** Higher fires first among equal deadlines. */
  priority: number;
  /** Monotonic ms (Clock.monoNow) at which the run becomes due. */
  deadline: number;
}

/** deadline asc, then priority desc, then runId asc: a total order per run. */
function compareEntries(a: WindowEntry, b: WindowEntry): number {
  if (a.deadline !== b.deadline) return a.deadline < b.deadline ? -1 : 1;
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.runId - b.runId;
}

export class RunHeap {
  private readonly heap = new Heap<WindowEntry>(compareEntries);
  private readonly live = new Map<number, WindowEntry>();
  private readonly perShard = new Map<number, number>();

  /** Live entries. */
  get size(): number {
    return this.live.size;
  }

  /** Dead nodes still in the heap array (exported for metrics and tests). */
  get tombstones(): number {
    return this.heap.length - this.live.size;
  }

  /**
   * Inserts `entry`, or replaces the live entry with the same runId (a
   * reschedule, or a loader re-offering with a new due time). Re-pushing an
   * identical entry is a no-op, so overlapping loader scans cost nothing.
   * Returns whether the heap changed.
   */
  push(entry: WindowEntry): boolean {
    const current = this.live.get(entry.runId);
    if (current !== undefined && sameEntry(current, entry)) return false;
    if (current !== undefined) this.forget(current);
    const node: WindowEntry = {
      runId: entry.runId,
      shard: entry.shard,
      dueAtMs: entry.dueAtMs,
      priority: entry.priority,
      deadline: entry.deadline,
    };
    this.live.set(node.runId, node);
    this.perShard.set(node.shard, this.sizeOfShard(node.shard) + 1);
    this.heap.push(node);
    if (current !== undefined) this.compactIfSparse();
    return true;
  }

  /** Tombstones the run's entry. O(1) amortised. */
  remove(runId: number): boolean {
    const current = this.live.get(runId);
    if (current === undefined) return false;
    this.forget(current);
    this.compactIfSparse();
    return true;
  }

  has(runId: number): boolean {
    return this.live.has(runId);
  }

  get(runId: number): Readonly<WindowEntry> | undefined {
    return this.live.get(runId);
  }

  /** The earliest live entry. */
  peek(): Readonly<WindowEntry> | undefined {
    this.dropDeadTop();
    return this.heap.peek();
  }

  /** Removes and returns, in order, up to `max` live entries with deadline <= nowMono. */
  popDue(nowMono: number, max = Number.POSITIVE_INFINITY): WindowEntry[] {
    const due: WindowEntry[] = [];
    while (due.length < max) {
      this.dropDeadTop();
      const top = this.heap.peek();
      if (top === undefined || top.deadline > nowMono) break;
      this.heap.pop();
      this.forget(top);
      due.push(top);
    }
    // Pops shrink the live count too; keep tombstones <= live after every call.
    if (due.length > 0) this.compactIfSparse();
    return due;
  }

  sizeOfShard(shard: number): number {
    return this.perShard.get(shard) ?? 0;
  }

  /** Tombstones every entry of `shard` (ownership lost). O(live). Returns how many. */
  removeShard(shard: number): number {
    if (this.sizeOfShard(shard) === 0) return 0;
    let removed = 0;
    // Deleting the current key while iterating a Map is well defined.
    for (const entry of this.live.values()) {
      if (entry.shard !== shard) continue;
      this.live.delete(entry.runId);
      removed++;
    }
    this.perShard.delete(shard);
    this.compactIfSparse();
    return removed;
  }

  /**
   * Recomputes every live deadline (the wall clock stepped, so the
   * wall→monotonic conversion changed) and rebuilds the heap. O(live).
   */
  rebase(deadlineOf: (entry: Readonly<WindowEntry>) => number): void {
    // Mutating in place is safe: only live nodes go into the rebuilt heap, and
    // every stale node is dropped with the old array.
    for (const entry of this.live.values()) entry.deadline = deadlineOf(entry);
    this.rebuild();
  }

  /** Earliest due time (wall ms) among a shard's entries. O(live): admin only. */
  earliestDueOfShard(shard: number): number | undefined {
    if (this.sizeOfShard(shard) === 0) return undefined;
    let earliest: number | undefined;
    for (const entry of this.live.values()) {
      if (entry.shard === shard && (earliest === undefined || entry.dueAtMs < earliest)) {
        earliest = entry.dueAtMs;
      }
    }
    return earliest;
  }

  /** Live entries in no particular order. */
  entries(): IterableIterator<Readonly<WindowEntry>> {
    return this.live.values();
  }

  clear(): void {
    this.live.clear();
    this.perShard.clear();
    this.heap.clear();
  }

  private forget(entry: WindowEntry): void {
    this.live.delete(entry.runId);
    const left = this.sizeOfShard(entry.shard) - 1;
    if (left > 0) this.perShard.set(entry.shard, left);
    else this.perShard.delete(entry.shard);
  }

  private isLive(node: WindowEntry): boolean {
    return this.live.get(node.runId) === node;
  }

  private dropDeadTop(): void {
    for (let top = this.heap.peek(); top !== undefined && !this.isLive(top); top = this.heap.peek()) {
      this.heap.pop();
    }
  }

  private compactIfSparse(): void {
    if (this.tombstones * 2 > this.heap.length) this.rebuild();
  }

  private rebuild(): void {
    if (this.live.size === 0) this.heap.clear();
    else this.heap.init([...this.live.values()]);
  }
}

function sameEntry(a: WindowEntry, b: WindowEntry): boolean {
  return (
    a.dueAtMs === b.dueAtMs && a.deadline === b.deadline && a.priority === b.priority && a.shard === b.shard
  );
}
