/**
 * The delivery hub: hands claimed runs to the worker streams connected to
 * this daemon, within each stream's credit (max in flight).
 *
 * Owns: the open streams, each stream's in-flight deliveries, and per queue
 * a ready queue of claimed runs waiting for credit (best first: priority,
 * then due time; ready-queue.ts). A run is in exactly one
 * place: ready (claimed, not sent), or in flight on one stream (its lease
 * maybe restarting before the send). A redelivery of a run replaces any
 * older copy (it carries the newer delivery identity).
 *
 * A stream that closes leaves its deliveries unanswered; the caller expires
 * their leases so the redelivery reaper hands them out again at once. A
 * stream drained (its worker is closing) gets no more runs and its credit
 * counts for no claim, while its deliveries stay in flight until answered.
 * States of a stream: registered → (drained) → unregistered.
 *
 * A delivery lease is the worker's time to answer, so it runs from the
 * hand-out: a run that waited in `ready` (no stream with credit) long enough
 * to use up half its lease restarts it (`renewLease`, conditional on the
 * delivery still being current) before it is sent, holding the stream's
 * credit meanwhile. Otherwise a run parked
 * longer than its lease reaches the worker already expired, and the reaper
 * hands it out again while the worker is working on it. The reaper of this
 * daemon leaves the runs held here unsent alone (unsentIds): their lease
 * runs out in Postgres while they wait, and restarts at the hand-out.
 */
import type { FiredRunRow } from '../db/queries/columns.js';
import type { KnownHandOff } from '../run-ref.js';
import { ReadyQueue } from './ready-queue.js';
import type { Grant, QueueLimit, Refusal } from './queue-limits.js';

/** A limited queue whose permit was refused retries after this long (the rate budget resets each second). */
const PERMIT_RETRY_MS = 20;
/** unsentIds() names parked runs whose lease ends within this long: past a reaper pass, and any skew between our clock and Postgres's. */
const UNSENT_LEASE_MARGIN_MS = 30_000;
/** A permit lapses this long after it was taken unless given back (a daemon died holding it). */
const PERMIT_MAX_MS = 3_600_000;
/** Most of a stream's credit kept free from staged runs for runs due now (hasRoomToStage). */
const STAGE_RESERVE_MAX = 16;
/** room() with no stream, or little credit: claims go on, in batches of at most this many. */
const MIN_ROOM = 1_000;
/**
 * room() never falls below this: a queue just short of full (its worker slow,
 * or its permits scarce) must not shrink every other queue's claims to a few
 * runs each.
 */
export const MIN_CLAIM_BATCH = 100;

/** A delivery in flight on a stream: its reference, and when it was handed to the stream. */
export interface DeliveryIdentity extends KnownHandOff {
  /** The run's queue. */
  queue: string;
  /** Handed out under a queue permit it took, given back when the delivery settles (a 'shared' one is not its own). */
  permit: boolean;
  /** Wall-clock epoch ms of the hand-off to the stream, or a staged run's due time: the run's recorded `fired_at`. */
  sentAtMs: number;
  /** Handed over ahead of its due time, for its worker to start at `sentAtMs` (stage()). */
  staged: boolean;
  /** Whether `sentAtMs` has been written to Postgres already (see takeUnrecorded). */
  recorded: boolean;
  /** A run of a workflow step (its Complete takes the workflow path at once). */
  step: boolean;
}

/**
 * When a delivery was released to its worker, for `fired_at`: its hand-off,
 * or a staged run's due time — null for a staged run not due yet at `nowMs`
 * (its stream ended before it could start).
 */
export function releasedAt(d: DeliveryIdentity, nowMs: number): number | null {
  return d.staged && d.sentAtMs > nowMs ? null : d.sentAtMs;
}

/**
 * Restarts the delivery lease of a run that waited for credit. Resolves with the
 * new expiry (epoch ms), or null when the delivery was superseded meanwhile.
 */
export type RenewLease = (run: FiredRunRow) => Promise<number | null>;

export interface WorkerSink {
  readonly id: number;
  readonly workerId: string;
  readonly queues: ReadonlySet<string>;
  readonly credit: number;
  /** Its worker takes runs this many ms before due and holds them (staging); 0 or absent: none. */
  readonly stageAheadMs?: number;
  /**
   * Writes one run to the stream, released at `sentAtMs` (wall ms); a staged
   * run goes out `startInMs` ahead of that, for its worker to hold. Sinks
   * may gather the runs sent in one tick into one message.
   */
  send(run: FiredRunRow, sentAtMs: number, startInMs?: number): void;
  /** Asks the worker to stop a run it holds (CancelRun). Sinks without it cannot be told. */
  cancel?(delivery: DeliveryIdentity, reason: string): void;
}

/**
 * Per-queue limits (queue-limits.ts). A queue with a limit has each hand-out
 * wait for a permit; every other queue pays one map lookup.
 */
export interface DeliveryGate {
  limitOf(queue: string): QueueLimit | undefined;
  acquire(queue: string, runId: number, limit: QueueLimit, nowMs: number, untilMs: number): Promise<Grant | Refusal>;
  release(queue: string, runId: number): void;
  /** A permit for a run already in flight, whatever the count; false when it could not be taken. */
  adopt(queue: string, runId: number, nowMs: number, untilMs: number): Promise<boolean>;
}

/** Receives every run of every queue, with no credit limit: an in-process consumer (tests, embedding). */
export const ALL_QUEUES = '*';

interface StreamState {
  sink: WorkerSink;
  inFlight: Map<number, DeliveryIdentity>;
  /** Credit held by limited queues' permit requests under way (pumpLimited): not free for any other queue. */
  reserved: number;
  /** Its worker is closing (drain): in no queue's list, its credit counted nowhere. */
  drained: boolean;
  /** Its queues, and which one pumpFor starts from next. */
  queues: string[];
  nextQueue: number;
}

export class DeliveryHub {
  private readonly streams = new Map<number, StreamState>();
  private readonly byQueue = new Map<string, StreamState[]>();
  private readonly ready = new Map<string, ReadyQueue>();
  private readonly cursor = new Map<string, number>();
  private readyCount = 0;
  /** Limited queues whose permit loop is running. */
  private readonly permitting = new Set<string>();
  /** Runs holding a stream's credit while their lease restarts (sendRenewed): not sent yet. */
  private readonly renewing = new Map<number, { identity: DeliveryIdentity; run: FiredRunRow; done: Promise<void> }>();

  constructor(
    private readonly onSent?: (run: FiredRunRow) => void,
    private readonly renewLease?: RenewLease,
    private readonly wallNow: () => number = Date.now,
    private readonly gate?: DeliveryGate,
  ) {}

  get backlog(): number {
    return this.readyCount;
  }

  /**
   * How many runs of `queue` may wait here for credit (or a permit): twice
   * the credit of the streams that take the queue, and at least an equal
   * share of MIN_ROOM among the queues with runs waiting (so however many
   * queues back up, the floor parks MIN_ROOM runs in all). A claim beyond
   * that only parks runs here with their leases running: when 98,000 runs
   * came due at once, claims outran the workers by half a minute, leases ran
   * out while the runs waited, and the redeliveries and lease renewals buried
   * the daemon. `parkedQueues`: queues with runs waiting, this one counted.
   */
  private capOf(queue: string, parkedQueues: number): number {
    let credit = 0;
    // The streams pick() hands this queue's runs to: its own, else those taking every queue.
    for (const st of this.byQueue.get(queue) ?? this.byQueue.get(ALL_QUEUES) ?? []) credit += st.sink.credit;
    return Math.max(Math.max(1, Math.floor(MIN_ROOM / parkedQueues)), 2 * credit);
  }

  /** Queues with runs waiting here. */
  private parkedQueues(): number {
    let n = 0;
    for (const q of this.ready.values()) if (q.size > 0) n++;
    return n;
  }

  /** How many more runs of `queue` may be parked now (≤ 0: the queue is full; the claim holds its runs back). */
  roomFor(queue: string): number {
    const parked = this.ready.get(queue)?.size ?? 0;
    return this.capOf(queue, this.parkedQueues() + (parked > 0 ? 0 : 1)) - parked;
  }

  /**
   * Queues whose parked runs fill their room: the claim leaves their runs
   * scheduled, so a slow, limited or unserved queue never holds back the
   * claims of the others (the room is per queue, not shared). A queue can go
   * one claim batch (room()) past its room before it shows here: the claim
   * learns a run's queue only by claiming it.
   */
  fullQueues(): string[] {
    const n = this.parkedQueues();
    const out: string[] = [];
    for (const [queue, q] of this.ready) if (q.size > 0 && q.size >= this.capOf(queue, n)) out.push(queue);
    return out;
  }

  /**
   * How many more claimed runs to take now, whatever their queue: twice the
   * credit of the open streams (at least MIN_ROOM), less the runs waiting for
   * it in queues that are not full. A full queue's parked runs do not count:
   * its runs are held back by the claim itself (fullQueues), and must not
   * stop the claims of the queues being worked.
   */
  room(): number {
    let credit = 0;
    for (const st of this.streams.values()) if (!st.drained) credit += st.sink.credit;
    const n = this.parkedQueues();
    let waiting = 0;
    for (const [queue, q] of this.ready) if (q.size > 0 && q.size < this.capOf(queue, n)) waiting += q.size;
    return Math.max(MIN_CLAIM_BATCH, Math.max(MIN_ROOM, 2 * credit) - waiting);
  }

  /** Worker streams registered (in-process sinks, which have negative ids, are not counted). */
  get streamCount(): number {
    let n = 0;
    for (const id of this.streams.keys()) if (id >= 0) n++;
    return n;
  }

  /** Open streams per subscribed queue ('*' for every queue); read-only, for the web console's queues page. */
  streamsPerQueue(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [queue, list] of this.byQueue) out[queue] = list.length;
    return out;
  }

  register(sink: WorkerSink): void {
    const st: StreamState = { sink, inFlight: new Map(), reserved: 0, drained: false, queues: [...sink.queues], nextQueue: 0 };
    this.streams.set(sink.id, st);
    for (const q of sink.queues) {
      const list = this.byQueue.get(q) ?? [];
      list.push(st);
      this.byQueue.set(q, list);
    }
    for (const q of sink.queues) this.pump(q);
  }

  /** Removes a stream; returns its unanswered deliveries. */
  unregister(id: number): DeliveryIdentity[] {
    const st = this.streams.get(id);
    if (!st) return [];
    this.streams.delete(id);
    this.unlist(st);
    for (const d of st.inFlight.values()) this.releasePermit(d);
    return [...st.inFlight.values()];
  }

  /**
   * The stream's worker is closing: no more runs for it, and its credit no
   * longer makes room for claims. What it holds stays in flight (its answers
   * settle it; unregister returns the rest). Runs parked for its queues wait
   * for another stream, as if it had closed.
   */
  drain(id: number): void {
    const st = this.streams.get(id);
    if (!st || st.drained) return;
    st.drained = true;
    this.unlist(st);
  }

  /** Takes a stream out of the queues' lists: pick() no longer hands it runs. */
  private unlist(st: StreamState): void {
    for (const q of st.sink.queues) {
      const list = (this.byQueue.get(q) ?? []).filter((s) => s !== st);
      if (list.length) this.byQueue.set(q, list);
      else this.byQueue.delete(q);
    }
  }

  /**
   * Runs held here but not sent — parked for credit or a permit, or
   * restarting their lease before the hand-out — whose lease has run out or
   * will within UNSENT_LEASE_MARGIN_MS (the reaper's candidates: the others
   * it would not take anyway, and thousands may be parked).
   */
  unsentIds(): number[] {
    const out: number[] = [];
    const before = this.wallNow() + UNSENT_LEASE_MARGIN_MS;
    for (const q of this.ready.values())
      for (const r of q.values()) if (r.lease_expires_at_ms !== null && r.lease_expires_at_ms < before) out.push(r.id);
    for (const id of this.renewing.keys()) out.push(id);
    return out;
  }

  /** Takes every run parked for credit (a stopping daemon hands them back to Postgres). */
  takeParked(): FiredRunRow[] {
    const out: FiredRunRow[] = [];
    for (const q of this.ready.values()) out.push(...q.values());
    this.ready.clear();
    this.readyCount = 0;
    return out;
  }

  /**
   * A run's worker is to stop it: tell the stream holding it (it stays in
   * flight until the worker answers). A run still parked for credit is taken
   * out and returned: it never reaches a worker, so the caller ends its lease.
   */
  cancel(runId: number, reason: string): { told: boolean; parked: FiredRunRow | null; renewed?: Promise<void> } {
    for (const st of this.streams.values()) {
      const held = st.inFlight.get(runId);
      if (!held) continue;
      const renewal = this.renewing.get(runId);
      if (renewal?.identity === held) {
        // Its lease is restarting before the hand-out: it never goes out. The
        // caller ends its lease once the renewal is done (else the renewal, landing
        // after, would restart the lease of a run nobody holds).
        st.inFlight.delete(runId);
        this.releasePermit(held);
        this.pumpFor(st);
        return { told: false, parked: renewal.run, renewed: renewal.done };
      }
      st.sink.cancel?.(held, reason);
      return { told: st.sink.cancel !== undefined, parked: null };
    }
    for (const q of this.ready.values()) {
      const run = q.get(runId);
      if (run) {
        q.delete(runId);
        this.readyCount--;
        return { told: false, parked: run };
      }
    }
    return { told: false, parked: null };
  }

  /** A run ended without its worker's answer (cancelled at its lease end): its credit and permit are free. */
  drop(runId: number): void {
    for (const st of this.forget(runId)) this.pumpFor(st);
  }

  /**
   * Staging: hands a claimed run that is due in `startInMs` to a stream whose
   * worker holds runs that far ahead and has credit now (beyond the tenth
   * kept for runs due now: hasRoomToStage), to start at its due
   * time; false (nothing done) when none can take it, its queue is limited
   * (a permit is taken at the hand-out, which must then be the start), or it
   * is at most once. Recorded as released at its due time (see
   * releasedAt for one whose stream ends first). Unlike deliver(), never
   * parks: the caller keeps the run until due.
   */
  stage(run: FiredRunRow, startInMs: number): boolean {
    // At most once: were its worker to die holding it, nobody would ever run it; handed out at due, only a worker dying mid-run can lose it.
    if (run.delivery === 'at_most_once' || this.gate?.limitOf(run.queue) || this.holdsNewer(run)) return false;
    const list = this.byQueue.get(run.queue) ?? this.byQueue.get(ALL_QUEUES);
    if (!list) return false;
    const start = this.cursor.get(run.queue) ?? 0;
    for (let i = 0; i < list.length; i++) {
      const st = list[(start + i) % list.length];
      if ((st.sink.stageAheadMs ?? 0) < startInMs || !hasRoomToStage(st)) continue;
      this.cursor.set(run.queue, (start + i + 1) % list.length);
      const freed = this.forget(run.id);
      st.inFlight.set(run.id, { ...identityOf(run, run.due_at_ms, false), staged: true });
      st.sink.send(run, run.due_at_ms, startInMs);
      this.onSent?.(run);
      for (const f of freed) if (f !== st) this.pumpFor(f);
      return true;
    }
    return false;
  }

  /** When the last run staged at a worker is due (its sentAtMs: its release), or -Infinity when none is in flight. */
  lastStagedStart(): number {
    let last = -Infinity;
    for (const st of this.streams.values()) for (const d of st.inFlight.values()) if (d.sentAtMs > last) last = d.sentAtMs;
    return last;
  }

  /** Hands a claimed run to a stream with credit, or parks it until one has. */
  deliver(run: FiredRunRow): void {
    if (this.holdsNewer(run)) return; // an older copy arriving late (e.g. released as the reaper redelivered)
    const freed = this.forget(run.id);
    const st = this.gate?.limitOf(run.queue) ? undefined : this.pick(run.queue);
    if (st) this.send(st, run);
    else {
      this.park(run);
      if (this.gate?.limitOf(run.queue)) this.pump(run.queue);
    }
    // The superseded copy's stream has credit again: runs parked on its other queues may go now.
    for (const f of freed) this.pumpFor(f);
  }

  /**
   * A delivery was answered (or refused as superseded): free its credit. With
   * `which`, only that exact delivery is settled: a late answer for an older
   * delivery must not free the credit of its redelivery on the same stream.
   */
  settle(streamId: number, runId: number, which?: { fence: number; deliveries: number }): DeliveryIdentity | undefined {
    const st = this.streams.get(streamId);
    const held = st?.inFlight.get(runId);
    if (!st || !held) return undefined;
    if (which && (held.fence !== which.fence || held.deliveries !== which.deliveries)) return undefined;
    st.inFlight.delete(runId);
    this.releasePermit(held);
    this.pumpFor(st);
    return held;
  }

  /**
   * Deliveries handed out before `beforeWallMs` whose hand-off time is not in
   * Postgres yet (no answer came): marked recorded and returned, so the
   * caller writes their `fired_at` in one batch.
   */
  takeUnrecorded(beforeWallMs: number): DeliveryIdentity[] {
    const out: DeliveryIdentity[] = [];
    for (const st of this.streams.values())
      for (const d of st.inFlight.values())
        if (!d.recorded && d.sentAtMs < beforeWallMs) {
          d.recorded = true;
          out.push(d);
        }
    return out;
  }

  /** The delivery in flight on a stream, if it is this one (a heartbeat: nothing settles). */
  peek(streamId: number, runId: number, which: { fence: number; deliveries: number }): DeliveryIdentity | undefined {
    const held = this.streams.get(streamId)?.inFlight.get(runId);
    return held && held.fence === which.fence && held.deliveries === which.deliveries ? held : undefined;
  }

  /** Whether a stream holds this delivery in flight. */
  holds(streamId: number, runId: number): boolean {
    return this.streams.get(streamId)?.inFlight.has(runId) ?? false;
  }

  /** Whether any stream holds the run in flight (handed over, staged or not). */
  handedOut(runId: number): boolean {
    for (const st of this.streams.values()) if (st.inFlight.has(runId)) return true;
    return false;
  }

  private holdsNewer(run: FiredRunRow): boolean {
    for (const q of this.ready.values()) {
      const held = q.get(run.id);
      if (held && held.deliveries > run.deliveries) return true;
    }
    for (const st of this.streams.values()) {
      const held = st.inFlight.get(run.id);
      if (held && held.deliveries > run.deliveries) return true;
    }
    return false;
  }

  /** Puts a run in its queue's ready queue (no copy of it is held here). */
  private park(run: FiredRunRow): void {
    let q = this.ready.get(run.queue);
    if (!q) this.ready.set(run.queue, (q = new ReadyQueue()));
    q.set(run);
    this.readyCount++;
  }

  /** Removes any older copy of the run; returns the streams whose credit that freed. */
  private forget(runId: number): StreamState[] {
    for (const q of this.ready.values()) if (q.delete(runId)) this.readyCount--;
    const freed: StreamState[] = [];
    for (const st of this.streams.values()) {
      const held = st.inFlight.get(runId);
      if (held && st.inFlight.delete(runId)) {
        this.releasePermit(held);
        freed.push(st);
      }
    }
    return freed;
  }

  private pick(queue: string): StreamState | undefined {
    const list = this.byQueue.get(queue) ?? this.byQueue.get(ALL_QUEUES);
    if (!list || list.length === 0) return undefined;
    const start = this.cursor.get(queue) ?? 0;
    for (let i = 0; i < list.length; i++) {
      const st = list[(start + i) % list.length];
      if (hasRoom(st)) {
        this.cursor.set(queue, (start + i + 1) % list.length);
        return st;
      }
    }
    return undefined;
  }

  private send(st: StreamState, run: FiredRunRow, permit = false): void {
    const sentAtMs = this.wallNow();
    st.inFlight.set(run.id, identityOf(run, sentAtMs, permit));
    st.sink.send(run, sentAtMs);
    this.onSent?.(run);
  }

  /**
   * A stream has credit again: pump its queues, starting one further each
   * time. Always from its first queue, a queue kept full by the claim took
   * every freed credit and the stream's other queues starved.
   */
  private pumpFor(st: StreamState): void {
    const queues = st.queues;
    const n = queues.length;
    const start = st.nextQueue++ % n;
    for (let i = 0; i < n; i++) this.pump(queues[(start + i) % n]);
  }

  private pump(queue: string): void {
    const limit = this.gate?.limitOf(queue);
    if (limit) return this.pumpLimited(queue);
    const q = this.ready.get(queue);
    while (q && q.size > 0) {
      const st = this.pick(queue);
      if (!st) return;
      const run = q.shift()!;
      this.readyCount--;
      if (this.renewLease && leaseRunDown(run, Date.now())) this.sendRenewed(st, run);
      else this.send(st, run);
    }
  }

  /**
   * A limited queue: one loop per queue hands out its best waiting run
   * whenever a stream has credit AND a permit is granted; a refused permit is
   * retried shortly (the runs wait, claimed, and their lateness shows in
   * fired_at). The permit is given back when the delivery settles.
   */
  private pumpLimited(queue: string): void {
    if (this.permitting.has(queue) || !this.gate) return;
    const gate = this.gate;
    this.permitting.add(queue);
    const step = async (): Promise<void> => {
      for (;;) {
        const q = this.ready.get(queue);
        const limit = gate.limitOf(queue);
        // Each way out drops the flag at once, not a microtask later: a pump() in
        // between (register() right after deliver()) would find it set and do nothing.
        if (!q || q.size === 0) return void this.permitting.delete(queue); // (re-read each turn: takeParked may have emptied it)
        const st = this.pick(queue);
        if (!st) return void this.permitting.delete(queue); // resumed by settle()/register() → pump()
        if (!limit) {
          // The limit was lifted: the plain path takes over.
          this.permitting.delete(queue);
          this.pump(queue);
          return;
        }
        const run = q.peek()!;
        const now = this.wallNow();
        let granted: Grant | Refusal;
        // The stream's credit is held while the permit is asked for: else another queue of the stream, unlimited,
        // took it meanwhile every time, and a limited queue below its limit got nothing for as long as the other
        // had a backlog (a hunt: 22 s).
        st.reserved++;
        try {
          granted = await gate.acquire(queue, run.id, limit, now, now + PERMIT_MAX_MS);
        } catch {
          granted = 'rate'; // the permit store is away: wait, never exceed the limit
        } finally {
          st.reserved--;
        }
        const listed = this.streams.get(st.sink.id) === st && !st.drained;
        if (granted !== true && granted !== 'shared') {
          if (listed) this.pumpFor(st); // the credit it held is free again: the stream's other queues may take it
          await new Promise((r) => setTimeout(r, PERMIT_RETRY_MS));
          continue;
        }
        const target = listed && hasRoom(st) ? st : this.pick(queue);
        // Ours to give back only if this call took it: a 'shared' permit is another copy's of this run.
        const own = granted === true;
        if (this.ready.get(queue) !== q || q.get(run.id) !== run || !target) {
          if (own) gate.release(queue, run.id); // it left meanwhile (redelivered, cancelled), or credit is gone
          // The credit held for it is free: runs of the stream's other queues parked meanwhile may go now
          // (no settle may come to pump them: nothing else is in flight there).
          if (listed) this.pumpFor(st);
          continue;
        }
        q.delete(run.id);
        this.readyCount--;
        if (this.renewLease && leaseRunDown(run, Date.now())) this.sendRenewed(target, run, own);
        else this.send(target, run, own);
        if (target !== st && listed) this.pumpFor(st); // (as above: the credit held on st went unused)
      }
    };
    void step().catch(() => this.permitting.delete(queue));
  }

  /**
   * The queue gained a bound on runs in flight: each of its deliveries in
   * flight takes an in-flight permit, so they count against the new bound —
   * else the bound let that many more out. Every one, `permit` or not: under
   * a rate-only limit a delivery holds a rate token but no in-flight permit
   * (taking one for a run that holds it already is a no-op). A delivery
   * settled meanwhile gives its permit straight back. With `only`, just
   * those runs (the sweeper's: permits the store lost, a Redis restarted empty).
   */
  adoptInFlight(queue: string, only?: ReadonlySet<number>): void {
    const gate = this.gate;
    if (!gate) return;
    for (const st of this.streams.values())
      for (const d of st.inFlight.values()) {
        if (d.queue !== queue || (only && !only.has(d.runId))) continue;
        const now = this.wallNow();
        void gate.adopt(queue, d.runId, now, now + PERMIT_MAX_MS).then(
          (ok) => {
            if (!ok) return;
            if (this.streams.get(st.sink.id) === st && st.inFlight.get(d.runId) === d) d.permit = true;
            // Settled meanwhile: give it back, unless the run is out again (its permit is that delivery's now).
            else if (![...this.streams.values()].some((o) => o.inFlight.has(d.runId))) gate.release(queue, d.runId);
          },
          () => undefined, // the permit store is away: this delivery stays uncounted
        );
      }
  }

  /** Runs of `queue` in flight on this daemon's streams (the permit sweeper checks each holds its permit). */
  inFlightOf(queue: string): number[] {
    const out: number[] = [];
    for (const st of this.streams.values()) for (const d of st.inFlight.values()) if (d.queue === queue) out.push(d.runId);
    return out;
  }

  /** Gives a delivery's permit back, whether or not its queue is still limited. */
  private releasePermit(d: DeliveryIdentity): void {
    if (d.permit) this.gate?.release(d.queue, d.runId);
    d.permit = false;
  }

  /** Sends a run that waited for credit once its lease has restarted; the credit is held meanwhile. */
  private sendRenewed(st: StreamState, run: FiredRunRow, permit = false): void {
    const identity = identityOf(run, this.wallNow(), permit);
    // Not handed out yet: the hand-off recorder must not write a time before the send.
    identity.recorded = true;
    st.inFlight.set(run.id, identity);
    const current = (): boolean => this.streams.get(st.sink.id) === st && st.inFlight.get(run.id) === identity;
    // The credit (and permit) it held while its lease restarted.
    const giveBack = (): void => {
      st.inFlight.delete(run.id);
      this.releasePermit(identity);
    };
    const handOut = (leaseExpiresAtMs: number): void => {
      const out = { ...run, lease_expires_at_ms: leaseExpiresAtMs };
      if (st.drained) {
        // Its worker is closing: the run goes to another stream, or waits for one.
        giveBack();
        return this.deliver(out);
      }
      identity.sentAtMs = this.wallNow();
      identity.recorded = false;
      st.sink.send(out, identity.sentAtMs);
      this.onSent?.(out);
    };
    const done = this.renewLease!(run).then(
      (expiresAt) => {
        this.forgetRenewal(run.id, identity);
        // Stream gone (its deliveries get expired), cancelled, or a newer delivery took over.
        if (!current()) return;
        if (expiresAt !== null) return handOut(expiresAt);
        // Superseded in Postgres (the reaper re-claimed it): the newer delivery comes through deliver().
        giveBack(); // (its permit too: else a limited queue's permit stays taken until it lapses, an hour)
        this.pumpFor(st);
      },
      // The restart failed (Postgres away): the run is let go, not sent. Handed out under the claim's lease (long
      // run out for a run parked that long), the reaper would hand it out again once Postgres is back, under a
      // worker still holding it. Let go, it is no longer held here (unsentIds), and the reaper hands it out
      // again once its lease is over and Postgres answers: no worker holds it meanwhile.
      () => {
        this.forgetRenewal(run.id, identity);
        if (!current()) return;
        giveBack();
        this.pumpFor(st);
      },
    );
    this.renewing.set(run.id, { identity, run, done });
  }

  private forgetRenewal(runId: number, identity: DeliveryIdentity): void {
    if (this.renewing.get(runId)?.identity === identity) this.renewing.delete(runId);
  }
}

/** The stream can take one more run: its credit less what it holds and what permit requests hold for it. */
function hasRoom(st: StreamState): boolean {
  return st.inFlight.size + st.reserved < st.sink.credit;
}

/**
 * The stream can take one more run to hold until its due time: a tenth of its
 * credit, at least one run and at most STAGE_RESERVE_MAX, stays free for runs
 * due now — a retry, a redelivery — which would otherwise wait behind runs
 * held for later. (A tenth of a large credit held back too much: at 10,000
 * runs/s a credit of 1,000 then left runs for the daemon to hand out at due,
 * and a busy second made them late.)
 */
function hasRoomToStage(st: StreamState): boolean {
  const reserve = Math.min(STAGE_RESERVE_MAX, Math.max(1, Math.floor(st.sink.credit / 10)));
  return st.inFlight.size + st.reserved + reserve < st.sink.credit;
}

function identityOf(run: FiredRunRow, sentAtMs: number, permit: boolean): DeliveryIdentity {
  return {
    runId: run.id,
    shard: run.shard,
    queue: run.queue,
    permit,
    fence: run.fence,
    deliveries: run.deliveries,
    sentAtMs,
    staged: false,
    recorded: false,
    // A step's own run (origin 'workflow'); a replay of one (origin 'replay') is completed like any run.
    step: run.origin === 'workflow',
  };
}

/**
 * Whether a parked run has used up over half its delivery lease (the lease's
 * length is about lease_expires_at − claimed_at). Only then is it worth a round
 * trip to restart it before the hand-out; a short wait for credit is not.
 */
function leaseRunDown(run: FiredRunRow, nowMs: number): boolean {
  if (run.lease_expires_at_ms === null || run.claimed_at_ms === null) return false;
  const length = run.lease_expires_at_ms - run.claimed_at_ms;
  return run.lease_expires_at_ms - nowMs < length / 2;
}
