/**
 * The failover bench's figures, computed from what was scheduled, what the
 * worker received, the kill and the moves (pure functions: no I/O).
 *
 * Definitions (all times wall-clock epoch ms, lag = first receipt − due_at):
 * - steady lag: runs due in [t0, kill − 1 s) (runs due in the last second
 *   before the kill that the victim had not fired yet wait for the takeover:
 *   they are reported apart, as "caught by the kill");
 * - takeover lag: runs due in [kill, kill + TTL + 2 s], all shards (and the
 *   killed daemon's shards alone);
 * - takeover gap: kill → first receipt of a run on a shard the killed daemon
 *   owned, delivered under a fence above the one it held (i.e. fired by the
 *   new owner); per shard too (the last shard back is the worst case). "Kill"
 *   is kill -9 or SIGSTOP (--fault): the same figures either way;
 * - handoff (per moved shard): worst lag of that shard's runs due in
 *   [move call − 1 s, move return + 1 s]; and the delivery gap, the largest
 *   receipt_i − max(due_i, receipt_{i−1}) over those runs in due order;
 * - lost: scheduled, never received, and not an at-most-once run stranded by
 *   the kill (claimed under the killed daemon's fence, status fired in
 *   Postgres: recorded as delivered before it was sent, so by design never
 *   redelivered);
 * - duplicates: extra receipts of an at-most-once run, and receipts of an
 *   at-least-once run repeating a delivery number already received;
 *   redelivered: at-least-once receipts with a new, higher delivery number.
 */
import { summarize, type LagSummary } from './stats.js';
import type { FailoverReceipts, RunRow } from './failover-cluster.js';

export interface ScheduledRun {
  shard: number;
  dueAtMs: number;
  alo: boolean;
}

export interface KillInfo {
  victim: string;
  /** Wall time just before SIGKILL. */
  at: number;
  /** Shards the victim owned (ListShards just before the kill) and their fences. */
  shards: number[];
  fences: Map<number, number>;
  /** Owners of every shard before the kill. */
  ownersBefore: Map<number, string>;
  /** PTTLs read right after the kill: when the victim's member record, liveness key and leases expire. */
  memberExpiresAt: number;
  aliveExpiresAt: number;
  leaseExpiresAt: Map<number, number>;
}

export interface MoveRecord {
  shard: number;
  from: string;
  to: string;
  startAt: number;
  endAt: number;
  /** MoveShard's own figure: request → new owner recorded in Postgres. */
  handoffMs: number;
  error?: string;
  /** From the daemons' logs: old owner 'shard released', new owner 'shard acquired'. */
  releasedAt?: number;
  acquiredAt?: number;
  /** First 'assignment changed' on the old / the new owner after the call. */
  fromAssignmentAt?: number;
  toAssignmentAt?: number;
}

export interface MoveResult extends MoveRecord {
  runs: number;
  received: number;
  worstLagMs: number;
  deliveryGapMs: number;
  /** First receipt of the shard under the new owner's fence, after the call started. */
  firstNewFireAt?: number;
}

export interface ShardTakeover {
  shard: number;
  leaseExpiresAt: number;
  acquiredAt: number;
  firstFireAt: number;
}

export interface TakeoverBreakdown {
  /** kill → victim's member record expired in Redis (3 membership periods after its last heartbeat). */
  memberExpiryMs: number;
  /** kill → victim's liveness key expired (TTL/2 after its last refresh): from then on, peers suspect it. */
  livenessExpiryMs: number;
  /** kill → first 'assignment changed' on a survivor. */
  assignmentChangedMs: number;
  /** kill → the victim's shard leases expired in Redis (min / max over shards). */
  leaseExpiryMs: { min: number; max: number };
  /** kill → 'shard acquired' by a survivor (min / p50 / max over shards). */
  acquiredMs: { min: number; p50: number; max: number };
  /** lease expired → acquired (acquire-loop wait), p50 / max over shards. */
  acquireWaitMs: { p50: number; max: number };
  /** acquired → first receipt (window rebuild + claim + delivery), p50 / max over shards. */
  acquiredToFireMs: { p50: number; max: number };
  perShard: ShardTakeover[];
}

export interface FailoverAnalysis {
  scheduled: number;
  scheduledAlo: number;
  received: number;
  lost: number;
  lostAlo: number;
  lostAmo: number;
  /**
   * Why the lost runs were not received, from Postgres at the end: still
   * scheduled (never fired: late past the end of the bench), at-least-once
   * fired and awaiting redelivery (late), at-most-once fired and never
   * received other than by the kill (gone for good), other.
   */
  lostWhy: { stillScheduled: number; aloAwaitingRedelivery: number; amoFiredNeverReceived: number; other: number };
  lostIds: number[];
  atMostOnceStranded: number;
  duplicates: number;
  redelivered: number;
  early: number;
  /** The earliest receipt's lead on its due time (ms; 0 when none was early). */
  earlyMaxMs: number;
  lagSteady: LagSummary;
  /** Runs due in [kill − 1 s, kill). */
  lagPreKill: LagSummary;
  lagTakeover: LagSummary;
  lagTakeoverKilledShards: LagSummary;
  lagAfter: LagSummary;
  /** Stages of the steady-state runs' first receipts: daemon fire (claim) − due, arrival − fire, handler − arrival. */
  stagesSteady: { claim: LagSummary; transit: LagSummary; worker: LagSummary };
  /** Per second of due time (relative to the kill): runs received, lag p50 / p99 / max. */
  timeline: { second: number; runs: number; p50: number; p99: number; max: number }[];
  takeoverGapMs: number;
  /** kill → first new-owner receipt on the last of the victim's shards to come back. */
  takeoverGapAllMs: number;
  shardsNotTakenOver: number[];
  breakdown: TakeoverBreakdown | undefined;
  moves: MoveResult[];
  handoffGapMs: number;
  handoffDeliveryGapMs: number;
}

const median = (xs: number[]): number => summarize(xs).p50;

export interface AnalysisInput {
  scheduled: Map<number, ScheduledRun>;
  receipts: FailoverReceipts;
  t0: number;
  leaseTtlMs: number;
  kill: KillInfo;
  moves: MoveRecord[];
  /** Postgres rows of the runs never received. */
  unreceivedRows: RunRow[];
  /** 'assignment changed' times on the survivors, and 'shard acquired' per shard, after the kill. */
  assignmentChangedAt: number;
  acquiredAt: Map<number, number>;
}

export function analyze(inp: AnalysisInput): FailoverAnalysis {
  const { scheduled, receipts: r, kill } = inp;
  const first = new Map<number, number>();
  const firstIdx = new Map<number, number>();
  let duplicates = 0;
  let redelivered = 0;
  let early = 0;
  let earlyMaxMs = 0;
  const seenDelivery = new Map<number, Set<number>>();
  const killedShards = new Set(kill.shards);
  const firstNewFire = new Map<number, number>();
  for (let i = 0; i < r.length; i++) {
    const id = r.runId[i];
    const s = scheduled.get(id);
    if (!s) continue; // warm-up or foreign
    const at = r.handledAtMs[i];
    if (at < s.dueAtMs) {
      early++;
      earlyMaxMs = Math.max(earlyMaxMs, s.dueAtMs - at);
    }
    const prev = first.get(id);
    if (prev === undefined || at < prev) {
      first.set(id, at);
      firstIdx.set(id, i);
    }
    const seen = seenDelivery.get(id);
    if (!seen) seenDelivery.set(id, new Set([r.delivery[i]]));
    else if (!s.alo) duplicates++;
    else if (seen.has(r.delivery[i])) duplicates++;
    else {
      redelivered++;
      seen.add(r.delivery[i]);
    }
    if (killedShards.has(s.shard) && at >= kill.at && r.fence[i] > (kill.fences.get(s.shard) ?? Infinity)) {
      const f = firstNewFire.get(s.shard);
      if (f === undefined || at < f) firstNewFire.set(s.shard, at);
    }
  }

  // Lost vs at-most-once stranded.
  const rowById = new Map(inp.unreceivedRows.map((row) => [row.id, row]));
  const lostIds: number[] = [];
  let stranded = 0;
  const lostWhy = { stillScheduled: 0, aloAwaitingRedelivery: 0, amoFiredNeverReceived: 0, other: 0 };
  let lostAlo = 0;
  let lostAmo = 0;
  let scheduledAlo = 0;
  for (const [id, s] of scheduled) {
    if (s.alo) scheduledAlo++;
    if (first.has(id)) continue;
    const row = rowById.get(id);
    const strandedByKill =
      !s.alo && row !== undefined && row.status === 'fired' && kill.ownersBefore.get(s.shard) === kill.victim && row.fence === kill.fences.get(s.shard);
    if (strandedByKill) stranded++;
    else {
      if (row?.status === 'scheduled') lostWhy.stillScheduled++;
      else if (row?.status === 'fired' && s.alo) lostWhy.aloAwaitingRedelivery++;
      else if (row?.status === 'fired') lostWhy.amoFiredNeverReceived++;
      else lostWhy.other++;
      lostIds.push(id);
      if (s.alo) lostAlo++;
      else lostAmo++;
    }
  }

  // Lag windows.
  const takeoverEnd = kill.at + inp.leaseTtlMs + 2000;
  const steady: number[] = [];
  const preKill: number[] = [];
  const takeover: number[] = [];
  const takeoverKilled: number[] = [];
  const after: number[] = [];
  const claim: number[] = [];
  const transit: number[] = [];
  const worker: number[] = [];
  const perSecond = new Map<number, number[]>();
  for (const [id, s] of scheduled) {
    const at = first.get(id);
    if (at === undefined) continue;
    const lag = at - s.dueAtMs;
    if (s.dueAtMs < inp.t0) continue;
    const sec = Math.floor((s.dueAtMs - kill.at) / 1000);
    const ps = perSecond.get(sec);
    if (ps) ps.push(lag);
    else perSecond.set(sec, [lag]);
    if (s.dueAtMs >= kill.at - 1000 && s.dueAtMs < kill.at) preKill.push(lag);
    else if (s.dueAtMs < kill.at) {
      steady.push(lag);
      const i = firstIdx.get(id)!;
      // As the fire-lag bench: the daemon's release (0 for a staged run), the arrival against due (< 0: staged ahead), the worker's own part.
      claim.push(r.firedAtMs[i] - s.dueAtMs);
      transit.push(r.arrivedAtMs[i] - s.dueAtMs);
      worker.push(r.handledAtMs[i] - Math.max(r.arrivedAtMs[i], s.dueAtMs));
    }
    else if (s.dueAtMs <= takeoverEnd) {
      takeover.push(lag);
      if (killedShards.has(s.shard)) takeoverKilled.push(lag);
    } else after.push(lag);
  }

  // Takeover gap.
  const gaps = kill.shards.map((sh) => (firstNewFire.get(sh) ?? Number.NaN) - kill.at);
  const known = gaps.filter((g) => Number.isFinite(g));
  const takeoverGapMs = known.length ? Math.min(...known) : Number.NaN;
  const takeoverGapAllMs = known.length === gaps.length && known.length ? Math.max(...known) : Number.NaN;
  const shardsNotTakenOver = kill.shards.filter((sh) => !firstNewFire.has(sh));

  let breakdown: TakeoverBreakdown | undefined;
  if (kill.shards.length) {
    const perShard: ShardTakeover[] = kill.shards.map((sh) => ({
      shard: sh,
      leaseExpiresAt: kill.leaseExpiresAt.get(sh) ?? Number.NaN,
      acquiredAt: inp.acquiredAt.get(sh) ?? Number.NaN,
      firstFireAt: firstNewFire.get(sh) ?? Number.NaN,
    }));
    const fin = (xs: number[]): number[] => xs.filter((x) => Number.isFinite(x));
    const acquired = fin(perShard.map((p) => p.acquiredAt - kill.at));
    const expiries = fin(perShard.map((p) => p.leaseExpiresAt - kill.at));
    const waits = fin(perShard.map((p) => p.acquiredAt - p.leaseExpiresAt));
    const toFire = fin(perShard.map((p) => p.firstFireAt - p.acquiredAt));
    const acq = summarize(acquired);
    breakdown = {
      memberExpiryMs: kill.memberExpiresAt - kill.at,
      livenessExpiryMs: kill.aliveExpiresAt - kill.at,
      assignmentChangedMs: inp.assignmentChangedAt - kill.at,
      leaseExpiryMs: { min: expiries.length ? Math.min(...expiries) : Number.NaN, max: expiries.length ? Math.max(...expiries) : Number.NaN },
      acquiredMs: { min: acq.count ? Math.min(...acquired) : Number.NaN, p50: acq.p50, max: acq.max },
      acquireWaitMs: { p50: median(waits), max: waits.length ? Math.max(...waits) : Number.NaN },
      acquiredToFireMs: { p50: median(toFire), max: toFire.length ? Math.max(...toFire) : Number.NaN },
      perShard,
    };
  }

  // Handoffs.
  const byShard = new Map<number, number[]>();
  for (const [id, s] of scheduled) {
    const l = byShard.get(s.shard);
    if (l) l.push(id);
    else byShard.set(s.shard, [id]);
  }
  const newFenceFire = (shard: number, since: number, fenceAbove: number): number | undefined => {
    let best: number | undefined;
    for (let i = 0; i < r.length; i++) {
      const s = scheduled.get(r.runId[i]);
      if (!s || s.shard !== shard || r.handledAtMs[i] < since || r.fence[i] <= fenceAbove) continue;
      if (best === undefined || r.handledAtMs[i] < best) best = r.handledAtMs[i];
    }
    return best;
  };
  const moves: MoveResult[] = inp.moves.map((m) => {
    const ids = (byShard.get(m.shard) ?? [])
      .filter((id) => {
        const d = scheduled.get(id)!.dueAtMs;
        return d >= m.startAt - 1000 && d <= m.endAt + 1000;
      })
      .sort((x, y) => scheduled.get(x)!.dueAtMs - scheduled.get(y)!.dueAtMs);
    let worst = Number.NaN;
    let gap = Number.NaN;
    let prevReceipt = -Infinity;
    let received = 0;
    for (const id of ids) {
      const due = scheduled.get(id)!.dueAtMs;
      const at = first.get(id);
      if (at === undefined) continue;
      received++;
      const lag = at - due;
      if (!(lag <= worst)) worst = lag;
      const g = at - Math.max(due, prevReceipt);
      if (!(g <= gap)) gap = g;
      prevReceipt = Math.max(prevReceipt, at);
    }
    // The fence before the move: the highest seen for this shard before the call.
    let fenceBefore = -Infinity;
    for (let i = 0; i < r.length; i++) {
      const s = scheduled.get(r.runId[i]);
      if (s && s.shard === m.shard && r.handledAtMs[i] < m.startAt && r.fence[i] > fenceBefore) fenceBefore = r.fence[i];
    }
    return { ...m, runs: ids.length, received, worstLagMs: worst, deliveryGapMs: gap, firstNewFireAt: newFenceFire(m.shard, m.startAt, fenceBefore) };
  });
  const ok = moves.filter((m) => !m.error);
  const maxOf = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => (b > a || Number.isNaN(a) ? b : a), Number.NaN) : Number.NaN);

  return {
    scheduled: scheduled.size,
    scheduledAlo,
    received: first.size,
    lost: lostIds.length,
    lostAlo,
    lostAmo,
    lostWhy,
    lostIds,
    atMostOnceStranded: stranded,
    duplicates,
    redelivered,
    early,
    earlyMaxMs,
    lagSteady: summarize(steady),
    lagPreKill: summarize(preKill),
    lagTakeover: summarize(takeover),
    lagTakeoverKilledShards: summarize(takeoverKilled),
    lagAfter: summarize(after),
    stagesSteady: { claim: summarize(claim), transit: summarize(transit), worker: summarize(worker) },
    timeline: [...perSecond.entries()]
      .sort((x, y) => x[0] - y[0])
      .map(([second, l]) => {
        const q = summarize(l);
        return { second, runs: q.count, p50: q.p50, p99: q.p99, max: q.max };
      }),
    takeoverGapMs,
    takeoverGapAllMs,
    shardsNotTakenOver,
    breakdown,
    moves,
    handoffGapMs: maxOf(ok.map((m) => m.worstLagMs)),
    handoffDeliveryGapMs: maxOf(ok.map((m) => m.deliveryGapMs)),
  };
}
