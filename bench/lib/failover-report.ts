/**
 * How the failover bench prints its results: a human summary, and (--json)
 * one JSON object whose keys are the bench's contract:
 * daemons, rate, lease_ttl_ms, takeover_gap_ms, handoff_gap_ms,
 * lag_ms_steady {p50, p99}, lag_ms_takeover {p99, max}, lost, duplicates
 * (plus the extra fields documented in the "Failover" section of bench/README.md).
 */
import type { MachineInfo } from './machine.js';
import { round, type LagSummary } from './stats.js';
import type { FailoverAnalysis } from './failover-analysis.js';
import type { FailoverCpu } from './failover-cpu.js';

export interface FailoverRun {
  daemons: number;
  rate: number;
  seconds: number;
  shardCount: number;
  leaseTtlMs: number;
  membershipIntervalMs: number;
  victim: string;
  /** How the victim was taken out: kill -9, or SIGSTOP (frozen). */
  fault: 'kill' | 'stop';
  victimShards: number[];
  /** Wall time of the kill. */
  killAt: number;
  ownersBefore: Record<string, number>;
  ingestPerS: number;
  /** First due minus the end of ingest (negative: ingest overran it). */
  ingestHeadroomMs: number;
  scheduledLate: number;
  loadAvgStart: number[];
  loadAvgEnd: number[];
  busyBeforePct: number;
  statusAtEnd: Record<string, number>;
  workerErrors: number;
  /** Stream errors per member, and the distinct messages (first few). */
  workerErrorsByMember: Record<string, number>;
  workerErrorSamples: string[];
  warnings: string[];
  cpuSteady: FailoverCpu | undefined;
  cpuAfterKill: FailoverCpu | undefined;
  /** Lost runs (first few), with who claimed them and when it let the shard go (ms after the kill). */
  lostSample: { id: number; shard: number; status: string; fence: number; alo: boolean; dueMs: number; firedMs: number | null; holder: string; holderEndMs: number | null; holderEnd: string }[];
  elapsedS: number;
  /** Last due time → end of the wait for the last runs. */
  drainMs: number;
  a: FailoverAnalysis;
}

export interface Targets {
  /** First killed shard firing on a survivor within TTL + TAKEOVER_MARGIN_MS. */
  takeover: boolean;
  /** Every killed shard (the last one back) within TTL + TAKEOVER_MARGIN_MS. */
  takeoverAll: boolean;
  handoff: boolean;
  lost: boolean;
  duplicates: boolean;
}

/**
 * Takeover target: lease TTL + this, whatever the membership period. The
 * lease is the only wait left (peers suspect a silent member from its
 * liveness key, TTL/2, and try to acquire at the lease's PTTL); the margin is
 * the acquire, the fence write, the window rebuild and one claim.
 */
export const TAKEOVER_MARGIN_MS = 200;

export function targets(r: FailoverRun): Targets {
  const bound = r.leaseTtlMs + TAKEOVER_MARGIN_MS;
  return {
    takeover: r.a.takeoverGapMs <= bound,
    takeoverAll: r.a.takeoverGapAllMs <= bound,
    handoff: r.a.handoffGapMs < 100,
    lost: r.a.lost === 0,
    duplicates: r.a.duplicates === 0,
  };
}

const f = (v: number | undefined, d = 1): string => (v !== undefined && Number.isFinite(v) ? v.toFixed(d) : '-');
const n = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const q = (s: LagSummary): string => `p50 ${f(s.p50)}  p99 ${f(s.p99)}  p99.9 ${f(s.p999)}  max ${f(s.max)}  (n ${n(s.count)})`;
const met = (ok: boolean): string => (ok ? 'MET' : 'MISSED');

function chunk<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

export function failoverText(r: FailoverRun): string {
  const a = r.a;
  const t = targets(r);
  const b = a.breakdown;
  const lines = [
    `failover: ${r.daemons} daemons, ${n(r.rate)} runs/s for ${r.seconds} s (half at-least-once, half at-most-once), ${r.shardCount} shards, lease TTL ${r.leaseTtlMs} ms, membership period ${r.membershipIntervalMs} ms, fault ${r.fault === 'stop' ? 'SIGSTOP' : 'kill -9'}`,
    `  load average at start ${r.loadAvgStart.map((x) => x.toFixed(2)).join(' ')}, at end ${r.loadAvgEnd.map((x) => x.toFixed(2)).join(' ')}; machine busy before start ${f(r.busyBeforePct, 0)}% of one core`,
    `  shards before the kill: ${Object.entries(r.ownersBefore).map(([m, c]) => `${m} ${c}`).join(', ')}; ${r.fault === 'stop' ? 'froze (SIGSTOP)' : 'killed'} ${r.victim} (shards ${r.victimShards.join(',')})`,
    `  ingest ${n(r.ingestPerS)} runs/s, ${n(r.ingestHeadroomMs)} ms before the first due time${r.scheduledLate ? `; ${n(r.scheduledLate)} runs acknowledged after their due time` : ''}`,
    `  scheduled ${n(a.scheduled)}  received ${n(a.received)}  lost ${n(a.lost)} (at-least-once ${a.lostAlo}, at-most-once ${a.lostAmo})  at-most-once stranded by the kill ${n(a.atMostOnceStranded)}  duplicates ${n(a.duplicates)}  redelivered ${n(a.redelivered)}  early ${n(a.early)}${a.early ? ` (by at most ${a.earlyMaxMs.toFixed(2)} ms)` : ''}`,
    ...(a.lost
      ? [
          `  of the lost, at the end (last due + ${f(r.drainMs / 1000, 1)} s): still scheduled (late, never fired) ${a.lostWhy.stillScheduled}, at-least-once fired and awaiting redelivery (late) ${a.lostWhy.aloAwaitingRedelivery}, at-most-once fired and never received ${a.lostWhy.amoFiredNeverReceived}, other ${a.lostWhy.other}`,
        ]
      : []),
    `  in Postgres at the end: ${Object.entries(r.statusAtEnd).map(([k, v]) => `${k} ${n(v)}`).join(', ')}`,
    `  lag ms (worker receipt - due_at):`,
    `    steady state (due in [t0, kill-1s))         ${q(a.lagSteady)}`,
    `    due in the last second before the kill      ${q(a.lagPreKill)}`,
    `    during takeover (due in [kill, kill+TTL+2s]) ${q(a.lagTakeover)}`,
    `      of which on the killed daemon's shards     ${q(a.lagTakeoverKilledShards)}`,
    `    after takeover                              ${q(a.lagAfter)}`,
    `    steady-state stages: release (fired_at - due; 0 staged)   ${q(a.stagesSteady.claim)}`,
    `                         arrival - due (< 0: staged ahead) ${q(a.stagesSteady.transit)}`,
    `                         worker (handler - max(arrival, due)) ${q(a.stagesSteady.worker)}`,
    `    by second of due time relative to the kill (runs, p50/p99/max ms):`,
    ...chunk(a.timeline, 4).map((row) => '      ' + row.map((t) => `${String(t.second).padStart(3)}s ${String(t.runs).padStart(5)} ${f(t.p50, 0).padStart(5)}/${f(t.p99, 0).padStart(5)}/${f(t.max, 0).padEnd(5)}`).join('  ')),
    `  takeover gap (kill -> first fire by a new owner on a killed shard): ${f(a.takeoverGapMs)} ms; last killed shard back after ${f(a.takeoverGapAllMs)} ms${a.shardsNotTakenOver.length ? `; never taken over: ${a.shardsNotTakenOver.join(',')}` : ''}`,
  ];
  if (b) {
    lines.push(
      `    where it goes (ms after the kill): liveness key expired ${f(b.livenessExpiryMs, 0)}, member record expired ${f(b.memberExpiryMs, 0)}, first 'assignment changed' on a survivor ${f(b.assignmentChangedMs, 0)},`,
      `      leases expired ${f(b.leaseExpiryMs.min, 0)}..${f(b.leaseExpiryMs.max, 0)}, 'shard acquired' ${f(b.acquiredMs.min, 0)} / ${f(b.acquiredMs.p50, 0)} / ${f(b.acquiredMs.max, 0)} (min/p50/max),`,
      `      lease expiry -> acquired (acquire loop) p50 ${f(b.acquireWaitMs.p50, 0)} max ${f(b.acquireWaitMs.max, 0)}; acquired -> first receipt (window rebuild + claim + send) p50 ${f(b.acquiredToFireMs.p50, 0)} max ${f(b.acquiredToFireMs.max, 0)}`,
      `      per shard (lease expired / acquired / first receipt, ms after the kill): ${b.perShard
        .map((p) => `${p.shard}: ${f(p.leaseExpiresAt - r.killAt, 0)}/${f(p.acquiredAt - r.killAt, 0)}/${f(p.firstFireAt - r.killAt, 0)}`)
        .join('  ')}`,
    );
  }
  lines.push(`  planned handoffs (MoveShard, one at a time):`);
  for (const m of a.moves) {
    const rel = m.releasedAt !== undefined ? f(m.releasedAt - m.startAt, 0) : '-';
    const acq = m.acquiredAt !== undefined ? f(m.acquiredAt - m.startAt, 0) : '-';
    const asg = (x: number | undefined): string => (x !== undefined ? f(x - m.startAt, 0) : '-');
    const fire = m.firstNewFireAt !== undefined ? f(m.firstNewFireAt - m.startAt, 0) : '-';
    lines.push(
      m.error
        ? `    shard ${m.shard} ${m.from} -> ${m.to}: FAILED (${m.error})`
        : `    shard ${m.shard} ${m.from} -> ${m.to}: MoveShard handoff_ms ${f(m.handoffMs)}; runs due ±1 s ${m.runs} (received ${m.received}), worst lag ${f(m.worstLagMs)} ms, delivery gap ${f(m.deliveryGapMs)} ms; 'assignment changed' on ${m.from} +${asg(m.fromAssignmentAt)} / on ${m.to} +${asg(m.toAssignmentAt)} ms, released +${rel} ms, acquired +${acq} ms, first new-owner receipt +${fire} ms`,
    );
  }
  lines.push(
    `  targets:`,
    `    takeover gap ${f(a.takeoverGapMs)} ms ≤ TTL + ${TAKEOVER_MARGIN_MS} = ${r.leaseTtlMs + TAKEOVER_MARGIN_MS} ms: ${met(t.takeover)}`,
    `    last killed shard back ${f(a.takeoverGapAllMs)} ms ≤ TTL + ${TAKEOVER_MARGIN_MS} = ${r.leaseTtlMs + TAKEOVER_MARGIN_MS} ms: ${met(t.takeoverAll)}`,
    `    handoff gap ${f(a.handoffGapMs)} ms < 100 ms: ${met(t.handoff)}`,
    `    lost ${a.lost} = 0: ${met(t.lost)}`,
    `    duplicates ${a.duplicates} = 0: ${met(t.duplicates)}`,
  );
  if (a.lostIds.length) {
    lines.push(`  lost runs (first ${r.lostSample.length}; times in ms after the kill):`);
    for (const x of r.lostSample) {
      lines.push(
        `    run ${x.id} shard ${x.shard} ${x.alo ? 'at-least-once' : 'at-most-once'}: due ${f(x.dueMs, 0)}, Postgres status ${x.status}, fence ${x.fence}${x.firedMs !== null ? `, claimed at ${f(x.firedMs, 0)}` : ''}; fence held by ${x.holder}${x.holderEndMs !== null ? `, which let the shard go at ${f(x.holderEndMs, 0)} (${x.holderEnd})` : ''}`,
      );
    }
  }
  const cpu = (name: string, c: FailoverCpu | undefined): string =>
    c
      ? `  CPU ${name} (${f(c.seconds, 1)} s), % of one core: daemons ${f(c.daemons, 0)}, bench+worker ${f(c.bench, 0)}, postgres ${f(c.postgresOurs, 0)} (+${f(c.postgresOther, 0)} other pg), redis ${f(c.redis, 0)}, machine ${f(c.machine, 0)} (other processes ${f(c.other, 0)})`
      : `  CPU ${name}: -`;
  lines.push(cpu('steady state', r.cpuSteady), cpu('kill to end', r.cpuAfterKill));
  if (r.workerErrors) {
    lines.push(`  worker stream errors: ${r.workerErrors} (${Object.entries(r.workerErrorsByMember).map(([m, c]) => `${m} ${c}`).join(', ')}; the killed daemon's are expected): ${r.workerErrorSamples.join(' | ')}`);
  }
  if (r.warnings.length) lines.push(`  daemon warnings (first ${r.warnings.length}): ${r.warnings.join(' | ')}`);
  lines.push(`  elapsed ${f(r.elapsedS, 1)} s`);
  return lines.join('\n');
}

export function failoverJson(r: FailoverRun, machine: MachineInfo): string {
  const a = r.a;
  const t = targets(r);
  const b = a.breakdown;
  const okMoves = a.moves.filter((m) => !m.error);
  return JSON.stringify({
    daemons: r.daemons,
    rate: r.rate,
    lease_ttl_ms: r.leaseTtlMs,
    takeover_gap_ms: round(a.takeoverGapMs, 1),
    handoff_gap_ms: round(a.handoffGapMs, 1),
    lag_ms_steady: { p50: round(a.lagSteady.p50), p99: round(a.lagSteady.p99), p999: round(a.lagSteady.p999), max: round(a.lagSteady.max) },
    lag_ms_pre_kill: { p99: round(a.lagPreKill.p99), max: round(a.lagPreKill.max) },
    lag_ms_takeover: { p50: round(a.lagTakeover.p50), p99: round(a.lagTakeover.p99), max: round(a.lagTakeover.max) },
    lost: a.lost,
    duplicates: a.duplicates,
    at_most_once_stranded: a.atMostOnceStranded,
    lost_why: { still_scheduled: a.lostWhy.stillScheduled, alo_awaiting_redelivery: a.lostWhy.aloAwaitingRedelivery, amo_fired_never_received: a.lostWhy.amoFiredNeverReceived, other: a.lostWhy.other },
    drain_ms: Math.round(r.drainMs),
    redelivered: a.redelivered,
    move_handoff_ms: okMoves.map((m) => round(m.handoffMs, 1)),
    handoff_gap_ms_per_move: a.moves.map((m) => (m.error ? null : round(m.worstLagMs, 1))),
    handoff_delivery_gap_ms: round(a.handoffDeliveryGapMs, 1),
    moves_failed: a.moves.length - okMoves.length,
    takeover_gap_all_shards_ms: round(a.takeoverGapAllMs, 1),
    lag_ms_steady_stages: { claim_p99: round(a.stagesSteady.claim.p99), send_p99: round(a.stagesSteady.transit.p99), worker_p99: round(a.stagesSteady.worker.p99) },
    lag_ms_takeover_killed_shards: { p99: round(a.lagTakeoverKilledShards.p99), max: round(a.lagTakeoverKilledShards.max) },
    takeover_breakdown_ms: b
      ? {
          liveness_expired: round(b.livenessExpiryMs, 0),
          member_expired: round(b.memberExpiryMs, 0),
          assignment_changed: round(b.assignmentChangedMs, 0),
          lease_expired_min: round(b.leaseExpiryMs.min, 0),
          lease_expired_max: round(b.leaseExpiryMs.max, 0),
          acquired_min: round(b.acquiredMs.min, 0),
          acquired_p50: round(b.acquiredMs.p50, 0),
          acquired_max: round(b.acquiredMs.max, 0),
          acquire_wait_p50: round(b.acquireWaitMs.p50, 0),
          acquire_wait_max: round(b.acquireWaitMs.max, 0),
          acquired_to_fire_p50: round(b.acquiredToFireMs.p50, 0),
          acquired_to_fire_max: round(b.acquiredToFireMs.max, 0),
        }
      : null,
    targets: {
      takeover_gap_le_ttl_plus_200: t.takeover,
      takeover_gap_all_shards_le_ttl_plus_200: t.takeoverAll,
      handoff_gap_lt_100: t.handoff,
      lost_zero: t.lost,
      duplicates_zero: t.duplicates,
    },
    seconds: r.seconds,
    shards: r.shardCount,
    membership_interval_ms: r.membershipIntervalMs,
    fault: r.fault,
    victim: r.victim,
    victim_shards: r.victimShards.length,
    scheduled: a.scheduled,
    received: a.received,
    early: a.early,
    load_avg_start: r.loadAvgStart.map((x) => round(x)),
    load_avg_end: r.loadAvgEnd.map((x) => round(x)),
    machine_busy_before_pct: round(r.busyBeforePct, 0),
    cpu_pct_steady: r.cpuSteady ? { daemons: round(r.cpuSteady.daemons, 0), postgres: round(r.cpuSteady.postgresOurs, 0), machine: round(r.cpuSteady.machine, 0), other: round(r.cpuSteady.other, 0) } : null,
    machine,
  });
}
