/**
 * Linux /proc readings for the bench: a peak-RSS sampler for one process and
 * CPU time per component (daemon, worker, our Postgres backends, the rest of
 * Postgres, Redis, the whole machine) between two snapshots, and how long
 * the daemon's and the worker's main threads (their event loops) and our
 * Postgres backends waited for a CPU meanwhile (the scheduler's run queue).
 *
 * Everything here only reads /proc; on a system without it the readings are
 * empty and the bench says so rather than failing.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** VmRSS and VmHWM (peak) of a process in MiB; undefined once it is gone. */
export function readRss(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Samples a process's RSS every `everyMs` and keeps the maximum. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  peakMb = 0;
  lastHwmMb = 0;
  samples = 0;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 250,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }

  private sample(): void {
    const r = readRss(this.pid);
    if (!r) return;
    this.samples++;
    if (r.rssMb > this.peakMb) this.peakMb = r.rssMb;
    if (Number.isFinite(r.hwmMb)) this.lastHwmMb = r.hwmMb;
  }
}

interface ProcTicks {
  comm: string;
  ticks: number;
  cmdline: string;
  /** Time its main thread spent runnable but waiting for a CPU, ns (/proc/<pid>/schedstat; NaN without it). */
  runDelayNs: number;
}

/** The main thread's run-queue wait (second field of /proc/<pid>/schedstat, ns). */
function readRunDelayNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return NaN;
  }
}

function readProc(pid: number): ProcTicks | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // Fields after "(comm)": state is [0], utime [11], stime [12].
    const ticks = Number(fields[11]) + Number(fields[12]);
    let cmdline = '';
    if (comm === 'postgres') cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    // Only for the processes waits are reported of (cpuBetween): node and postgres.
    const runDelayNs = comm === 'node' || comm === 'postgres' ? readRunDelayNs(pid) : NaN;
    return { comm, ticks, cmdline, runDelayNs };
  } catch {
    return undefined;
  }
}

function machineBusyTicks(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = v[3] + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

export interface CpuSnapshot {
  at: number;
  procs: Map<number, ProcTicks>;
  machine: { busy: number; total: number };
}

export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, ProcTicks>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    /* no /proc */
  }
  for (const p of pids) {
    const t = readProc(Number(p));
    if (t) procs.set(Number(p), t);
  }
  return { at: performance.now(), procs, machine: machineBusyTicks() };
}

/** CPU used between two snapshots, in % of ONE core (200% = both cores of a 2-core box). */
export interface CpuUse {
  daemon: number;
  worker: number;
  bench: number;
  postgresOurs: number;
  postgresOther: number;
  redis: number;
  machine: number;
  /**
   * Time spent runnable but waiting for a CPU over the phase, in % of its
   * duration: the daemon's and the worker's main threads (their event loops:
   * a timer or a message waits that long on top of any work), and our Postgres
   * backends summed (those that ended before the phase did are not counted,
   * as in the CPU figures). On two cores shared by all of them this is about
   * as much of the daemon's stalled event loop as its own work (bench/README.md,
   * twelfth session).
   */
  waits: { daemon: number; worker: number; postgresOurs: number };
}

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, who: { daemonPid: number; workerPid: number; benchPid: number; database: string }): CpuUse {
  const hz = ticksPerSecond();
  const seconds = (b.at - a.at) / 1000;
  const pct = (ticks: number): number => (seconds > 0 ? (ticks / hz / seconds) * 100 : NaN);
  const used = (pid: number): number => {
    const end = b.procs.get(pid);
    return end ? end.ticks - (a.procs.get(pid)?.ticks ?? 0) : 0;
  };
  const waitPct = (ns: number): number => (seconds > 0 ? (ns / 1e9 / seconds) * 100 : NaN);
  // A process started during the phase waited from 0.
  const waited = (pid: number): number => {
    const end = b.procs.get(pid);
    if (!end) return NaN;
    const start = a.procs.get(pid)?.runDelayNs;
    return end.runDelayNs - (start !== undefined && Number.isFinite(start) ? start : 0);
  };
  let pgOursWait = 0;
  let pgOurs = 0;
  let pgOther = 0;
  let redis = 0;
  for (const [pid, p] of b.procs) {
    if (p.comm === 'postgres') {
      // Backends show "postgres: <user> <database> <client> <state>".
      if (p.cmdline.includes(` ${who.database} `)) {
        pgOurs += used(pid);
        // A backend whose figure could not be read (it ended meanwhile) is left out, not the sum.
        const w = waited(pid);
        if (Number.isFinite(w)) pgOursWait += w;
      }
      else pgOther += used(pid);
    } else if (p.comm.startsWith('redis-server')) redis += used(pid);
  }
  const cores = b.machine.total - a.machine.total;
  return {
    daemon: pct(used(who.daemonPid)),
    worker: who.workerPid === who.benchPid ? NaN : pct(used(who.workerPid)),
    bench: pct(used(who.benchPid)),
    postgresOurs: pct(pgOurs),
    postgresOther: pct(pgOther),
    redis: pct(redis),
    // /proc/stat sums all cores: busy share of the total, scaled to "% of one core".
    machine: cores > 0 ? ((b.machine.busy - a.machine.busy) / cores) * coreCount() * 100 : NaN,
    waits: {
      daemon: waitPct(waited(who.daemonPid)),
      worker: who.workerPid === who.benchPid ? NaN : waitPct(waited(who.workerPid)),
      postgresOurs: waitPct(pgOursWait),
    },
  };
}

function coreCount(): number {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n').filter((l) => /^cpu\d+ /.test(l)).length || 1;
  } catch {
    return 1;
  }
}

/** Busy CPU of the whole machine over `ms`, in % of one core. */
export async function machineBusyPct(ms: number): Promise<number> {
  const a = machineBusyTicks();
  await new Promise((r) => setTimeout(r, ms));
  const b = machineBusyTicks();
  const total = b.total - a.total;
  return total > 0 ? ((b.busy - a.busy) / total) * coreCount() * 100 : NaN;
}

/**
 * The machine may be shared (other builds and tests): wait until it is
 * nearly idle — under `thresholdPct` of one core for one second — or until
 * `maxWaitMs` passed. Returns the last reading.
 */
export async function waitForQuietMachine(thresholdPct: number, maxWaitMs: number, onWait?: (busyPct: number) => void): Promise<number> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const busy = await machineBusyPct(1_000);
    if (!(busy >= thresholdPct) || Date.now() >= deadline) return busy;
    onWait?.(busy);
  }
}
