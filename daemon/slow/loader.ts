/**
 * The window loader: keeps the fast lane holding every scheduled run of the
 * owned shards that is due within the window W.
 *
 * Owns, per owned shard: `loadedUntil` (wall ms high-water mark: every
 * scheduled run due at or before it has been offered) and `scanTarget` (the
 * upper bound of a scan in flight). States of a shard: added (never loaded;
 * first scan has no lower bound, so overdue runs come too) → loaded (extended
 * every tick by scanning (loadedUntil, now + W]) → removed.
 *
 * Invariants (I-4, no gap at the window edge):
 * - `offer()` of a committed run pushes it into the heap when its due time is
 *   at or below max(loadedUntil, scanTarget): a scan whose snapshot missed the
 *   row can only be one that is still in flight or already done, and either
 *   way the bound covers it. Above the bound the loader will read it later.
 * - A repair scan with no lower bound re-reads (-inf, loadedUntil] on a timer
 *   and after every listener reconnect or ownership change: commit order is
 *   not due order, so only an overlapping re-scan closes the gap. It offers
 *   what memory lacks, less what the claim path holds or fires while the
 *   scan runs (LoaderOptions watchClaims): such a run is on its way or fired,
 *   not missing, and put back in the heap it makes a claim that misses. This
 *   relies on a fired run never becoming scheduled again under its id.
 * - Back-pressure: at most `maxInWindow` runs in memory; when a scan hits the
 *   cap, loadedUntil stops just before the last due time read, so the window
 *   shrinks instead of memory growing. An offer (or a scanned or repaired row)
 *   that finds memory full is refused the same way: loadedUntil drops below
 *   its due time (and a scan in flight may not raise it past that), so a
 *   later scan reads the row once there is room.
 */
import type { Db } from '../db/pool.js';
import { LOAD_WINDOW_PAGE, type WindowPage } from '../db/queries/window.js';
import { mapStorageError } from '../db/storage-errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../fast/clock.js';
import type { RunRef } from '../run-ref.js';

/** What the loader needs of the fast lane. */
export interface WindowSink {
  offer(run: RunRef): void;
  cancel(runId: number): boolean;
  dropShard(shard: number): number;
  has(runId: number): boolean;
  readonly size: number;
}

/** Values per run in a LOAD_WINDOW_PAGE page: id, shard, priority, due ms. */
const WIDTH = 4;
/** Most rows per window page: a few ms of work on the event loop the fire timer shares. */
const PAGE_SIZE = 2_000;
/** Due-time slice (ms) of a scan's first page above a lower bound; later slices adapt to what pages hold. */
const FIRST_SLICE_MS = 1_000;
/** A slice grows at most this much from one page to the next (sparse stretches of the window). */
const SLICE_GROWTH = 8;

/** One page request of a scan: runs due in (lo, hi] after the keyset (afterDue, afterId), at most `size`. */
interface PageRequest {
  lo: number | null;
  hi: number;
  afterDue: number | null;
  afterId: number | null;
  size: number;
}

/**
 * A page's runs as WIDTH numbers each (id, shard, priority, due ms), parsed
 * from LOAD_WINDOW_PAGE's one text column without a string per number.
 */
export function parseWindowPage(text: string | null, maxRuns: number): Float64Array {
  const out = new Float64Array(maxRuns * WIDTH);
  if (text === null || text.length === 0) return out.subarray(0, 0);
  let n = 0;
  let v = 0;
  let negative = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44 /* , */) {
      out[n++] = negative ? -v : v;
      v = 0;
      negative = false;
    } else if (c === 45 /* - */) negative = true;
    else v = v * 10 + (c - 48); // exact: ids and epoch ms stay below 2^53
  }
  out[n++] = negative ? -v : v;
  if (n % WIDTH !== 0 || n > out.length) throw new Error(`window page: ${n} values is not ${WIDTH} per run (at most ${maxRuns} runs)`);
  return out.subarray(0, n);
}

export interface LoaderOptions {
  windowMs: number;
  maxInWindow: number;
  loadIntervalMs: number;
  repairIntervalMs: number;
  /**
   * What the claim path holds, or fires from now until close() (the engine's
   * Claimer.watchClaims): a repair scan skips those runs. Its snapshot may
   * predate their claim, and they have left the heap for a claim, not gone
   * missing. @defaultValue none (the heap is all there is)
   */
  watchClaims?: () => { has(runId: number): boolean; close(): void };
}

interface ShardWindow {
  loadedUntil: number | null;
  scanTarget: number | null;
  /** Lowest (due - 1) refused at the cap while a scan was in flight: that scan may not mark more as loaded. */
  refusedBelow: number | null;
  /** Bumped on every add, so a scan started before a drop/re-add is discarded. */
  generation: number;
}

export interface LoaderStats {
  scans: number;
  loaded: number;
  repaired: number;
}

export class WindowLoader {
  private readonly shards = new Map<number, ShardWindow>();
  private generation = 0;
  private loadTimer: NodeJS.Timeout | null = null;
  private repairTimer: NodeJS.Timeout | null = null;
  private loading: Promise<void> | null = null;
  private repairWanted = false;
  private kickAgain = false;
  private delayedRepair: NodeJS.Timeout | null = null;
  private stopped = true;
  readonly stats: LoaderStats = { scans: 0, loaded: 0, repaired: 0 };

  constructor(
    private readonly db: Db,
    private readonly sink: WindowSink,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: LoaderOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.loadTimer = setInterval(() => this.kick(), this.opts.loadIntervalMs);
    this.repairTimer = setInterval(() => this.requestRepair(), this.opts.repairIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.loadTimer) clearInterval(this.loadTimer);
    if (this.repairTimer) clearInterval(this.repairTimer);
    if (this.delayedRepair) clearTimeout(this.delayedRepair);
    await this.loading?.catch(() => undefined);
  }

  /** A shard was acquired: load it from scratch (no lower bound) at once. */
  addShard(shard: number): void {
    this.sink.dropShard(shard);
    this.shards.set(shard, { loadedUntil: null, scanTarget: null, refusedBelow: null, generation: ++this.generation });
    this.kick();
  }

  /** A shard was lost or released: forget it and everything of it in memory. */
  removeShard(shard: number): void {
    this.shards.delete(shard);
    this.sink.dropShard(shard);
  }

  isLoaded(shard: number): boolean {
    return this.shards.get(shard)?.loadedUntil != null;
  }

  loadedUntil(shard: number): number | null {
    return this.shards.get(shard)?.loadedUntil ?? null;
  }

  /**
   * A run was committed (scheduled, rescheduled or retried) on a shard we may
   * own. Inside the covered bound it goes to the heap; beyond it any stale
   * entry is dropped and the loader will read the row when its time comes.
   */
  offer(run: RunRef): void {
    const w = this.shards.get(run.shard);
    if (!w) return;
    const bound = Math.max(w.loadedUntil ?? -Infinity, w.scanTarget ?? -Infinity);
    if (run.dueAtMs <= bound) this.admit(w, run);
    else this.sink.cancel(run.runId);
  }

  /** Into memory, unless memory is full: then the window shrinks below the run and a later scan reads it. */
  private admit(w: ShardWindow, run: RunRef): void {
    if (this.sink.size < this.opts.maxInWindow || this.sink.has(run.runId)) {
      this.sink.offer(run);
      return;
    }
    const below = run.dueAtMs - 1;
    if (w.loadedUntil !== null) w.loadedUntil = Math.min(w.loadedUntil, below);
    if (w.scanTarget !== null) w.refusedBelow = Math.min(w.refusedBelow ?? Infinity, below);
  }

  /** Ask for a repair scan of every loaded shard (timer, listener reconnect). */
  requestRepair(): void {
    this.repairWanted = true;
    this.kick();
  }

  /**
   * Ask for a repair scan `ms` from now (coalesced). After an ownership change
   * the old owner may still commit near-due runs it believed it owned for up
   * to one lease TTL, telling nobody; this scan picks them up.
   */
  requestRepairAfter(ms: number): void {
    // Re-armed to the latest request: every acquisition gets its full TTL of cover.
    if (this.delayedRepair) clearTimeout(this.delayedRepair);
    this.delayedRepair = setTimeout(() => {
      this.delayedRepair = null;
      this.requestRepair();
    }, ms);
  }

  /** Runs one load pass now unless one is running (it will loop if needed). */
  kick(): void {
    if (this.stopped) return;
    if (this.loading) {
      this.kickAgain = true; // e.g. a shard added during this pass: load it right after
      return;
    }
    this.kickAgain = false;
    this.loading = this.loadPass()
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'window load failed; will retry'))
      .finally(() => {
        this.loading = null;
        if (this.repairWanted || this.kickAgain) this.kick(); // asked for during this pass
      });
  }

  /** Resolves when the current pass (if any) finishes. For tests and shutdown. */
  async settle(): Promise<void> {
    while (this.loading) await this.loading;
  }

  private async loadPass(): Promise<void> {
    const target = Math.floor(this.clock.wallNow()) + this.opts.windowMs;
    // Shards never loaded go first (a start, a takeover): none of their runs can fire until
    // then, while a repair only re-reads what memory holds (a million rows take seconds).
    const fresh: number[] = [];
    for (const [shard, w] of this.shards) if (w.loadedUntil === null) fresh.push(shard);
    if (fresh.length > 0) await this.scan(fresh, null, target);
    if (this.repairWanted) {
      this.repairWanted = false;
      await this.repair();
    }
    // Group shards by their lower bound: usually two groups (new, loaded).
    const groups = new Map<number | null, number[]>();
    for (const [shard, w] of this.shards) {
      if (w.loadedUntil !== null && w.loadedUntil >= target) continue;
      const list = groups.get(w.loadedUntil) ?? [];
      list.push(shard);
      groups.set(w.loadedUntil, list);
    }
    for (const [from, shards] of groups) await this.scan(shards, from, target);
  }

  private async scan(shards: number[], from: number | null, to: number): Promise<void> {
    const room = this.opts.maxInWindow - this.sink.size;
    if (room <= 0) return; // back-pressure: the window does not advance
    const gens = new Map<number, number>();
    for (const s of shards) {
      const w = this.shards.get(s);
      if (!w) continue;
      w.scanTarget = to;
      gens.set(s, w.generation);
    }
    let read = 0;
    let lastDue: number | null = null;
    const startedMono = this.clock.monoNow();
    try {
      await this.pages(shards, from, to, room, (runs) => {
        for (let i = 0; i < runs.length; i += WIDTH) {
          const id = runs[i];
          const shard = runs[i + 1];
          const w = this.shards.get(shard);
          if (!w || w.generation !== gens.get(shard)) continue;
          // Held already: the offer that put it there is at least as new as this snapshot.
          if (this.sink.has(id)) continue;
          this.admit(w, { runId: id, shard, dueAtMs: runs[i + 3], priority: runs[i + 2] });
        }
        read += runs.length / WIDTH;
        if (runs.length > 0) lastDue = runs[runs.length - 1];
      });
    } finally {
      for (const s of shards) {
        const w = this.shards.get(s);
        if (w && w.generation === gens.get(s)) w.scanTarget = null;
      }
    }
    this.stats.scans++;
    this.stats.loaded += read;
    // A first load is a rebuild (start, takeover, crash recovery): say how big and how fast, once per acquisition.
    if (from === null) this.log.info({ shards: shards.length, runs: read, ms: Math.round(this.clock.monoNow() - startedMono) }, 'window loaded');
    // Hitting the cap: stop just before the last due time read so ties are re-read.
    const reached = read >= room && lastDue !== null ? lastDue - 1 : to;
    for (const s of shards) {
      const w = this.shards.get(s);
      if (!w || w.generation !== gens.get(s)) continue;
      let until = Math.max(w.loadedUntil ?? -Infinity, from === null ? reached : Math.max(from, reached));
      if (w.refusedBelow !== null) until = Math.min(until, w.refusedBelow);
      w.loadedUntil = until;
      w.refusedBelow = null;
    }
  }

  /**
   * Reads (from, to] in (due_at, id) order, in keyset pages of at most
   * PAGE_SIZE and `limit` rows in all, yielding between pages.
   *
   * Each page is also bounded by a due-time slice (lo, hi] that holds about
   * one page (see LOAD_WINDOW_PAGE: Postgres sorts everything a page's bounds
   * admit). A full page narrows the slice to the span it covered; an
   * exhausted slice is followed by the next, sized from the density just
   * seen. Without a lower bound the first slice ends now: the overdue runs,
   * read (and sorted) once. The next page is already in Postgres while this
   * one is admitted, so the two processes work side by side.
   */
  private async pages(shards: number[], from: number | null, to: number, limit: number, onPage: (runs: Float64Array) => void): Promise<void> {
    let span = FIRST_SLICE_MS;
    let req: PageRequest = {
      lo: from,
      hi: from === null ? Math.min(to, Math.floor(this.clock.wallNow())) : Math.min(to, from + span),
      afterDue: null,
      afterId: null,
      size: Math.min(PAGE_SIZE, limit),
    };
    let pending = this.page(shards, req);
    let read = 0;
    for (;;) {
      const runs = await pending;
      const count = runs.length / WIDTH;
      read += count;
      let next: PageRequest | null = null;
      if (read < limit && !this.stopped) {
        const size = Math.min(PAGE_SIZE, limit - read);
        if (count >= req.size) {
          // Full: the rest of this slice may hold many pages; keep each page's sort small.
          const lastDue = runs[runs.length - 1];
          span = Math.max(1, lastDue - runs[3]);
          next = { lo: req.lo, hi: Math.min(req.hi, lastDue + span), afterDue: lastDue, afterId: runs[runs.length - WIDTH], size };
        } else if (req.hi < to) {
          const start = req.afterDue ?? req.lo;
          if (start !== null) {
            const perMs = count / Math.max(1, req.hi - start);
            const want = perMs > 0 ? (0.8 * PAGE_SIZE) / perMs : Infinity;
            span = Math.max(1, Math.min(span * SLICE_GROWTH, Math.round(want)));
          }
          next = { lo: req.hi, hi: Math.min(to, req.hi + span), afterDue: null, afterId: null, size };
        }
      }
      if (next) {
        pending = this.page(shards, next);
        pending.catch(() => undefined); // awaited on the next turn; not unhandled if onPage throws first
      }
      onPage(runs);
      if (!next) return;
      req = next;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async page(shards: number[], r: PageRequest): Promise<Float64Array> {
    const values = [shards, r.lo, r.hi, r.afterDue, r.afterId, r.size];
    try {
      const { rows } = await this.db.query<WindowPage>(LOAD_WINDOW_PAGE, values);
      return parseWindowPage(rows[0]?.page ?? null, r.size);
    } catch (err) {
      throw mapStorageError(err);
    }
  }

  /** Re-reads (-inf, loadedUntil] of every loaded shard (paged); offers what memory lacks. */
  private async repair(): Promise<void> {
    const groups = new Map<number, number[]>();
    for (const [shard, w] of this.shards) {
      if (w.loadedUntil === null) continue;
      const list = groups.get(w.loadedUntil) ?? [];
      list.push(shard);
      groups.set(w.loadedUntil, list);
    }
    // Opened before the first page's snapshot: a run claimed after it is known here.
    const claims = this.opts.watchClaims?.();
    try {
      for (const [until, shards] of groups) {
        const gens = new Map(shards.map((s) => [s, this.shards.get(s)?.generation]));
        await this.pages(shards, null, until, this.opts.maxInWindow, (runs) => {
          for (let i = 0; i < runs.length; i += WIDTH) {
            const id = runs[i];
            const shard = runs[i + 1];
            const w = this.shards.get(shard);
            // Only what memory lacks: a held entry may be newer than this snapshot (a reschedule).
            if (!w || w.generation !== gens.get(shard) || this.sink.has(id) || claims?.has(id)) continue;
            this.stats.repaired++;
            this.admit(w, { runId: id, shard, dueAtMs: runs[i + 3], priority: runs[i + 2] });
          }
        });
      }
    } finally {
      claims?.close();
    }
  }
}
