/**
 * The "burst" scenario, the same code for every system (a PeerAdapter):
 *
 *   quiet    wait (bounded) for the shared machine to be idle; note how busy
 *   setup    fresh infrastructure, no warm-up; start the one consumer
 *   schedule N = rate × seconds delayed jobs, job i due at
 *            t0 + ⌊i·1000/rate⌋ ms, sent in due order right away;
 *            t0 = start + N / assumedIngest + lead, so with ingest at least as
 *            fast as assumed the first job is due ≥ `lead` after the last
 *            schedule call returned (the report shows the actual lead)
 *   fire     until every job arrived (after the last due time) or until the
 *            last due time + grace; receipts after that are not counted
 *   teardown always (adapter.teardown(): consumer, clients, children, data)
 *
 * Figures: received = distinct jobs received; lost = scheduled − received;
 * duplicates = receipts − distinct; early = receipts before due (the
 * receipt clock, clients/typescript/src/clock.ts, is exact to about ±1 ms); lag =
 * first receipt − due (ms, nearest rank); throughput = received ÷ (last
 * receipt − t0).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuBetween, cpuSnapshot, waitForQuietMachine, type CpuSnapshot } from '../proc.js';
import { summarize, type LagSummary } from '../stats.js';
import type { PeerAdapter, PeerJob, SystemName } from './types.js';

export interface ScenarioOptions {
  rate: number;
  seconds: number;
  leadSeconds: number;
  graceSeconds: number;
  /** Jobs/s the schedule phase is assumed to reach (sets t0). */
  assumedIngestPerS: number;
  quietWaitSeconds: number;
  quietBelowPct: number;
  log: (msg: string) => void;
  /** True once the run is being stopped (Ctrl-C, SIGTERM, time budget): the scenario gives up. */
  stopRequested: () => boolean;
}

/** CPU over the fire phase, % of one core. */
export interface FireCpu {
  /** The bench process: the consumer (and the bench's own bookkeeping). */
  consumer: number;
  /** timelane's daemon (0 for the others). */
  daemon: number;
  /** Backends of the system's own database. */
  postgresOurs: number;
  /** Every other Postgres process (other databases, background writers). */
  postgresOther: number;
  /** Every redis-server on the machine (shared and private). */
  redis: number;
  machine: number;
}

export interface SystemResult {
  system: SystemName;
  tuning: string;
  /** Jobs the system acknowledged. */
  scheduled: number;
  /** Jobs the scenario asked for (rate × seconds). */
  planned: number;
  received: number;
  lost: number;
  duplicates: number;
  early: number;
  /** How early the earliest receipt was, ms (0 if none was early). */
  earlyMaxMs: number;
  /** Receipts whose payload did not name a job of this run. */
  unknown: number;
  lag: LagSummary;
  throughputPerS: number;
  ingestPerS: number;
  /** First due time − last schedule acknowledgement (negative: ingest overran t0). */
  leadMs: number;
  /** Jobs acknowledged at or after their own due time. */
  scheduledLate: number;
  cpu: FireCpu | undefined;
  /** Machine busy (% of one core) just before, with nothing of this system running. */
  backgroundPct: number;
  error?: string;
}

/** Receipts of one run: first receipt per job, duplicates, early ones. */
class ReceiptBook {
  readonly first: Float64Array;
  received = 0;
  duplicates = 0;
  early = 0;
  unknown = 0;
  lastAt = -Infinity;
  private open = true;

  constructor(
    readonly total: number,
    private readonly dueOf: (i: number) => number,
  ) {
    this.first = new Float64Array(total).fill(Number.NaN);
  }

  readonly onReceipt = (i: number, at: number): void => {
    if (!this.open) return;
    if (!(i >= 0 && i < this.total)) {
      this.unknown++;
      return;
    }
    if (at < this.dueOf(i)) this.early++;
    if (Number.isNaN(this.first[i])) {
      this.first[i] = at;
      this.received++;
      if (at > this.lastAt) this.lastAt = at;
    } else this.duplicates++;
  };

  close(): void {
    this.open = false;
  }

  lags(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.total; i++) if (!Number.isNaN(this.first[i])) out.push(this.first[i] - this.dueOf(i));
    return out;
  }
}

function fireCpu(a: CpuSnapshot, b: CpuSnapshot, adapter: PeerAdapter): FireCpu {
  const u = cpuBetween(a, b, { daemonPid: adapter.daemonPid() ?? 0, workerPid: process.pid, benchPid: process.pid, database: adapter.database() ?? '\0' });
  return { consumer: u.bench, daemon: u.daemon, postgresOurs: u.postgresOurs, postgresOther: u.postgresOther, redis: u.redis, machine: u.machine };
}

export async function runScenario(adapter: PeerAdapter, opts: ScenarioOptions): Promise<SystemResult> {
  const log = (msg: string): void => opts.log(`[${adapter.system}] ${msg}`);
  const stopCheck = (): void => {
    if (opts.stopRequested()) throw new Error('stopped (interrupted or out of time)');
  };
  const total = Math.round(opts.rate * opts.seconds);
  let backgroundPct = Number.NaN;
  if (opts.quietWaitSeconds > 0) {
    let told = false;
    backgroundPct = await waitForQuietMachine(opts.quietBelowPct, opts.quietWaitSeconds * 1000, (busy) => {
      if (!told) log(`machine busy (${Math.round(busy)}% of a core, not ours): waiting up to ${opts.quietWaitSeconds} s`);
      told = true;
    });
  }

  let t0 = 0;
  const dueOf = (i: number): number => t0 + Math.floor((i * 1000) / opts.rate);
  const book = new ReceiptBook(total, dueOf);
  let scheduled = 0;
  let scheduledLate = 0;
  let lastAck = Number.NaN;
  let ingestPerS = 0;
  let cpu: FireCpu | undefined;
  let error: string | undefined;
  try {
    stopCheck();
    log('setup');
    await adapter.setup();
    await adapter.consume(book.onReceipt);
    stopCheck();

    const start = Date.now();
    t0 = Math.ceil(start + (total / opts.assumedIngestPerS) * 1000 + opts.leadSeconds * 1000);
    const jobs: PeerJob[] = Array.from({ length: total }, (_, i) => ({ index: i, dueAtMs: dueOf(i) }));
    const lastDue = total ? jobs[total - 1].dueAtMs : t0;
    log(`scheduling ${total} jobs, first due in ${t0 - start} ms`);
    await adapter.schedule(jobs, (chunk, ackedAt) => {
      scheduled += chunk.length;
      for (const j of chunk) if (ackedAt >= j.dueAtMs) scheduledLate++;
      if (!(ackedAt <= lastAck)) lastAck = ackedAt;
    });
    ingestPerS = total / (Math.max(1, Date.now() - start) / 1000);
    log(`scheduled at ${Math.round(ingestPerS)} jobs/s; first due in ${Math.round(t0 - Date.now())} ms`);

    // The /proc scan blocks this (the consumer's) event loop for a few ms: take it before t0.
    while (t0 - Date.now() > 250) {
      stopCheck();
      await sleep(Math.min(100, t0 - Date.now() - 250));
    }
    const cpuA = cpuSnapshot();
    const endBy = lastDue + opts.graceSeconds * 1000;
    while (Date.now() < endBy) {
      stopCheck();
      if (book.received >= total && Date.now() > lastDue) break;
      await sleep(50);
    }
    book.close();
    cpu = fireCpu(cpuA, cpuSnapshot(), adapter);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    log(`failed: ${error}`);
  } finally {
    book.close();
    log('teardown');
    await adapter.teardown();
  }

  const received = book.received;
  const lags = book.lags();
  let minLag = 0;
  for (const l of lags) if (l < minLag) minLag = l;
  return {
    system: adapter.system,
    tuning: adapter.describe(),
    scheduled,
    planned: total,
    received,
    lost: scheduled - received,
    duplicates: book.duplicates,
    early: book.early,
    earlyMaxMs: -minLag,
    unknown: book.unknown,
    lag: summarize(lags),
    throughputPerS: received && book.lastAt > t0 ? received / ((book.lastAt - t0) / 1000) : 0,
    ingestPerS,
    leadMs: Number.isNaN(lastAck) ? Number.NaN : t0 - lastAck,
    scheduledLate,
    cpu,
    backgroundPct,
    error,
  };
}
