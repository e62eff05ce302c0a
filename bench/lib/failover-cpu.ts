/**
 * CPU used between two /proc snapshots (bench/lib/proc.ts cpuSnapshot), in %
 * of ONE core, split into: our daemons (summed), the bench process (which
 * hosts the worker), our database's Postgres backends, other Postgres
 * processes, Redis, and everything else on the machine. On a shared 2-core
 * box this tells a saturated machine from a slow code path.
 */
import { execFileSync } from 'node:child_process';
import type { CpuSnapshot } from './proc.js';

export interface FailoverCpu {
  seconds: number;
  daemons: number;
  bench: number;
  postgresOurs: number;
  postgresOther: number;
  redis: number;
  machine: number;
  /** machine − all of the above: other people's work. */
  other: number;
}

let hz: number | undefined;
function ticksPerSecond(): number {
  if (hz === undefined) {
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      hz = 100;
    }
  }
  return hz;
}

export function cpuBetweenSnapshots(a: CpuSnapshot, b: CpuSnapshot, daemonPids: number[], database: string, cores: number): FailoverCpu {
  const seconds = (b.at - a.at) / 1000;
  const pct = (ticks: number): number => (seconds > 0 ? (ticks / ticksPerSecond() / seconds) * 100 : Number.NaN);
  // A process born between the snapshots counts in full (all its ticks fall in
  // the interval): the pools open Postgres backends all the time, and left out
  // they made our own Postgres look like a busy neighbour. One that ended
  // between them (a killed daemon) is not counted.
  const used = (pid: number): number => {
    const end = b.procs.get(pid);
    return end ? end.ticks - (a.procs.get(pid)?.ticks ?? 0) : 0;
  };
  let pgOurs = 0;
  let pgOther = 0;
  let redis = 0;
  for (const [pid, p] of b.procs) {
    if (p.comm === 'postgres') {
      if (p.cmdline.includes(` ${database} `)) pgOurs += used(pid);
      else pgOther += used(pid);
    } else if (p.comm.startsWith('redis-server')) redis += used(pid);
  }
  const total = b.machine.total - a.machine.total;
  const machine = total > 0 ? ((b.machine.busy - a.machine.busy) / total) * cores * 100 : Number.NaN;
  const daemons = pct(daemonPids.reduce((s, p) => s + used(p), 0));
  const bench = pct(used(process.pid));
  const out = { seconds, daemons, bench, postgresOurs: pct(pgOurs), postgresOther: pct(pgOther), redis: pct(redis), machine, other: 0 };
  out.other = machine - daemons - bench - out.postgresOurs - out.postgresOther - out.redis;
  return out;
}
