/**
 * RunHeap — the in-window runs of every owned shard, ordered by monotonic
 * deadline.
 *
 * Owns: the entries, stored column-wise in typed arrays indexed by *slot*
 * (run id, due time, deadline, shard, priority, state); a binary min-heap of
 * slots (an Int32Array); a `Map<runId, slot>` of the live entries; and a
 * per-shard count of live entries.
 *
 * Why columns and not an object per entry: at a million in-window runs the
 * objects (64 B + two boxed doubles each) and their promotion through the
 * young generation dominated both the memory and the rebuild time of the
 * window (profile of a 1M-run rebuild: RunHeap.push + FastLane.offer + GC
 * ≈ 40% of the daemon's CPU). A slot costs 37 B of typed arrays plus its Map
 * entry, lives outside the garbage-collected heap, and nothing is allocated
 * per push; objects are made only for what is handed out (peek, popDue, get).
 *
 * Slot states: free → live (push) → dead (removed, replaced, or its shard
 * dropped: a tombstone still referenced by the heap array) → free when the
 * heap drops it (at the top, or on a rebuild). Popped entries go straight
 * back to free. A slot is reused only once free, so the heap never holds a
 * slot twice.
 *
 * Lazy deletion: nothing is ever removed from the middle of the heap (a
 * linear walk: ~35 ms per remove at 50k entries with heap-js). A cancelled or
 * replaced entry is marked dead and discarded when it reaches the top. When
 * tombstones outnumber live entries the heap is rebuilt from the live map
 * (O(live), amortised over the removals that produced the tombstones), so the
 * heap array stays within 2x of live. Capacity shrinks again (slots repacked)
 * once live entries fall under an eighth of it.
 *
 * Invariants:
 * - `size` === live map size === sum of per-shard counts.
 * - tombstones <= size after every call.
 * - peek/popDue never return a tombstone.
 * - The heap owns its data (push copies the caller's values), so nobody can
 *   change a deadline behind the heap's back; `rebase` is the only way.
 */

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

const FREE = 0;
const LIVE = 1;
const DEAD = 2;
/** Smallest capacity (slots); capacity doubles as needed and is halved back by repacking. */
const MIN_CAPACITY = 1024;

export class RunHeap {
  private capacity = MIN_CAPACITY;
  private runIds = new Float64Array(MIN_CAPACITY);
  private dues = new Float64Array(MIN_CAPACITY);
  private deadlines = new Float64Array(MIN_CAPACITY);
  private shards = new Int32Array(MIN_CAPACITY);
  private priorities = new Int32Array(MIN_CAPACITY);
  private states = new Uint8Array(MIN_CAPACITY);
  /** Slots in heap order; [0, heapLength) is the heap (live and dead slots). */
  private heap = new Int32Array(MIN_CAPACITY);
  private heapLength = 0;
  /** Freed slots to reuse (a stack), and the first never-used slot. */
  private freeSlots = new Int32Array(MIN_CAPACITY);
  private freeCount = 0;
  private unused = 0;
  private readonly live = new Map<number, number>();
  private readonly perShard = new Map<number, number>();
  /** peek() is called on every offer (the timer's poke): hand out one object per head, not per call. */
  private headSlot = -1;
  private headEntry: WindowEntry | undefined;

  /** Live entries. */
  get size(): number {
    return this.live.size;
  }

  /** Slots allocated (typed-array capacity), live or not (exported for metrics and tests). */
  get slots(): number {
    return this.capacity;
  }

  /** Dead slots still in the heap array (exported for metrics and tests). */
  get tombstones(): number {
    return this.heapLength - this.live.size;
  }

  /**
   * Inserts `entry`, or replaces the live entry with the same runId (a
   * reschedule, or a loader re-offering with a new due time). Re-pushing an
   * identical entry is a no-op, so overlapping loader scans cost nothing.
   * Returns whether the heap changed.
   */
  push(entry: Readonly<WindowEntry>): boolean {
    return this.add(entry.runId, entry.shard, entry.dueAtMs, entry.priority, entry.deadline);
  }

  /** push() without an entry object: the loader's path, a million times per rebuild. */
  add(runId: number, shard: number, dueAtMs: number, priority: number, deadline: number): boolean {
    const current = this.live.get(runId);
    if (current !== undefined) {
      if (this.dues[current] === dueAtMs && this.deadlines[current] === deadline && this.priorities[current] === priority && this.shards[current] === shard) {
        return false;
      }
      this.kill(current);
    }
    const slot = this.allocate();
    this.runIds[slot] = runId;
    this.shards[slot] = shard;
    this.dues[slot] = dueAtMs;
    this.priorities[slot] = priority;
    this.deadlines[slot] = deadline;
    this.states[slot] = LIVE;
    this.live.set(runId, slot);
    this.perShard.set(shard, (this.perShard.get(shard) ?? 0) + 1);
    this.heap[this.heapLength] = slot;
    this.siftUp(this.heapLength++);
    if (current !== undefined) this.compactIfSparse();
    return true;
  }

  /** Tombstones the run's entry. O(1) amortised. */
  remove(runId: number): boolean {
    const slot = this.live.get(runId);
    if (slot === undefined) return false;
    this.kill(slot);
    this.compactIfSparse();
    return true;
  }

  has(runId: number): boolean {
    return this.live.has(runId);
  }

  get(runId: number): Readonly<WindowEntry> | undefined {
    const slot = this.live.get(runId);
    return slot === undefined ? undefined : this.entryAt(slot);
  }

  /** The earliest live entry. */
  peek(): Readonly<WindowEntry> | undefined {
    this.dropDeadTop();
    if (this.heapLength === 0) return undefined;
    const slot = this.heap[0];
    if (slot !== this.headSlot || this.headEntry === undefined) {
      this.headSlot = slot;
      this.headEntry = this.entryAt(slot);
    }
    return this.headEntry;
  }

  /** Removes and returns, in order, up to `max` live entries with deadline <= nowMono. */
  popDue(nowMono: number, max = Number.POSITIVE_INFINITY): WindowEntry[] {
    const due: WindowEntry[] = [];
    while (due.length < max) {
      this.dropDeadTop();
      if (this.heapLength === 0) break;
      const slot = this.heap[0];
      if (this.deadlines[slot] > nowMono) break;
      due.push(this.entryAt(slot));
      this.popTop();
      this.unlink(slot);
      this.release(slot);
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
    for (const [runId, slot] of this.live) {
      if (this.shards[slot] !== shard) continue;
      this.live.delete(runId);
      this.states[slot] = DEAD;
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
    for (const slot of this.live.values()) this.deadlines[slot] = deadlineOf(this.entryAt(slot));
    this.headSlot = -1;
    this.rebuild();
  }

  /** Earliest due time (wall ms) among a shard's entries. O(live): admin only. */
  earliestDueOfShard(shard: number): number | undefined {
    if (this.sizeOfShard(shard) === 0) return undefined;
    let earliest: number | undefined;
    for (const slot of this.live.values()) {
      if (this.shards[slot] === shard && (earliest === undefined || this.dues[slot] < earliest)) earliest = this.dues[slot];
    }
    return earliest;
  }

  /** Live entries in no particular order (a copy of each). */
  *entries(): IterableIterator<Readonly<WindowEntry>> {
    for (const slot of this.live.values()) yield this.entryAt(slot);
  }

  clear(): void {
    this.live.clear();
    this.perShard.clear();
    this.heapLength = 0;
    this.freeCount = 0;
    this.unused = 0;
    this.headSlot = -1;
    this.resize(MIN_CAPACITY, false);
  }

  // --- slots ---------------------------------------------------------------

  private entryAt(slot: number): WindowEntry {
    return {
      runId: this.runIds[slot],
      shard: this.shards[slot],
      dueAtMs: this.dues[slot],
      priority: this.priorities[slot],
      deadline: this.deadlines[slot],
    };
  }

  private allocate(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    // A free slot is either on the stack or at/after `unused`; heap + free stack never exceed capacity.
    if (this.unused === this.capacity) this.resize(this.capacity * 2, true);
    return this.unused++;
  }

  /** A slot no longer referenced by the heap becomes reusable. */
  private release(slot: number): void {
    this.states[slot] = FREE;
    if (slot === this.headSlot) this.headSlot = -1;
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Live → dead: out of the live map and the shard count; the heap drops it later. */
  private kill(slot: number): void {
    this.unlink(slot);
    this.states[slot] = DEAD;
  }

  private unlink(slot: number): void {
    this.live.delete(this.runIds[slot]);
    const shard = this.shards[slot];
    const left = this.sizeOfShard(shard) - 1;
    if (left > 0) this.perShard.set(shard, left);
    else this.perShard.delete(shard);
  }

  /** New arrays of `capacity` slots; `keep` copies the slots in use (same numbers). */
  private resize(capacity: number, keep: boolean): void {
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      if (keep) next.set(old.subarray(0, Math.min(old.length, capacity)));
      return next;
    };
    this.runIds = grow(this.runIds, (n) => new Float64Array(n));
    this.dues = grow(this.dues, (n) => new Float64Array(n));
    this.deadlines = grow(this.deadlines, (n) => new Float64Array(n));
    this.shards = grow(this.shards, (n) => new Int32Array(n));
    this.priorities = grow(this.priorities, (n) => new Int32Array(n));
    this.states = grow(this.states, (n) => new Uint8Array(n));
    this.heap = grow(this.heap, (n) => new Int32Array(n));
    this.freeSlots = grow(this.freeSlots, (n) => new Int32Array(n));
    this.capacity = capacity;
  }

  // --- heap ----------------------------------------------------------------

  /** Fire order: deadline asc, then priority desc, then runId asc (a total order per run). */
  private before(a: number, b: number): boolean {
    const da = this.deadlines[a];
    const db = this.deadlines[b];
    if (da !== db) return da < db;
    const pa = this.priorities[a];
    const pb = this.priorities[b];
    if (pa !== pb) return pa > pb;
    return this.runIds[a] < this.runIds[b];
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    const slot = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(slot, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = slot;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = this.heapLength;
    const slot = heap[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.before(heap[child + 1], heap[child])) child++;
      if (!this.before(heap[child], slot)) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = slot;
  }

  /** Removes heap[0] from the heap array (the caller decides what becomes of its slot). */
  private popTop(): void {
    const last = this.heap[--this.heapLength];
    if (this.heapLength > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
  }

  private dropDeadTop(): void {
    while (this.heapLength > 0 && this.states[this.heap[0]] !== LIVE) {
      const slot = this.heap[0];
      this.popTop();
      this.release(slot);
    }
  }

  private compactIfSparse(): void {
    if (this.tombstones * 2 > this.heapLength) this.rebuild();
    else if (this.capacity > MIN_CAPACITY && this.live.size * 8 < this.capacity) this.repack();
  }

  /** The heap from the live entries only; dead slots are freed. O(heap). */
  private rebuild(): void {
    for (let i = 0; i < this.heapLength; i++) {
      const slot = this.heap[i];
      if (this.states[slot] === DEAD) this.release(slot);
    }
    if (this.capacity > MIN_CAPACITY && this.live.size * 8 < this.capacity) {
      this.repack();
      return;
    }
    let n = 0;
    for (const slot of this.live.values()) this.heap[n++] = slot;
    this.heapLength = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Moves the live entries to slots 0..size-1 of arrays sized for them (memory back after a drain). O(live). */
  private repack(): void {
    let capacity = MIN_CAPACITY;
    while (capacity < 2 * this.live.size) capacity *= 2;
    const old = {
      runIds: this.runIds,
      dues: this.dues,
      deadlines: this.deadlines,
      shards: this.shards,
      priorities: this.priorities,
    };
    this.resize(capacity, false);
    let n = 0;
    for (const [runId, slot] of this.live) {
      this.runIds[n] = old.runIds[slot];
      this.dues[n] = old.dues[slot];
      this.deadlines[n] = old.deadlines[slot];
      this.shards[n] = old.shards[slot];
      this.priorities[n] = old.priorities[slot];
      this.states[n] = LIVE;
      this.live.set(runId, n); // an existing key: iteration order and progress are unaffected
      this.heap[n] = n;
      n++;
    }
    this.heapLength = n;
    this.unused = n;
    this.freeCount = 0;
    this.headSlot = -1;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }
}
