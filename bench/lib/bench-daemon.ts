/**
 * Helpers shared by the fire-lag and window trials for the daemon child
 * processes they start: a free loopback port, a bounded wait, the environment
 * of the CPU-profile and GC preloads, and a last-resort SIGKILL of daemons we
 * spawned for a database that DaemonProcess could not hand back.
 */
import net from 'node:net';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** SIGKILLs daemons we spawned for `database` that DaemonProcess could not hand back (start timed out). */
export function killStrayDaemons(database: string): void {
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (cmd.some((a) => a.endsWith(`${path.sep}cli.js`)) && cmd.includes('daemon') && cmd.some((a) => a.includes(`/${database}`))) process.kill(Number(d), 'SIGKILL');
    } catch {
      /* gone, or not ours */
    }
  }
}

export async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * NODE_OPTIONS for a daemon child: `nodeOptions` as given (--daemon-node-options),
 * `cpuProfDir` preloads cpu-prof-preload.js (Node refuses --cpu-prof there),
 * `gcHook` preloads gc-preload.js with --expose-gc (SIGUSR2 = full GC).
 * Undefined when none is asked for.
 */
export function daemonEnv(cpuProfDir: string | undefined, gcHook: boolean, nodeOptions?: string): Record<string, string> | undefined {
  const opts: string[] = nodeOptions ? [nodeOptions] : [];
  const env: Record<string, string> = {};
  if (cpuProfDir) {
    opts.push(`--import ${pathToFileURL(path.join(here, 'cpu-prof-preload.js')).href}`);
    env.TIMELANE_BENCH_CPU_PROF_DIR = path.resolve(cpuProfDir);
  }
  if (gcHook) opts.push(`--expose-gc --import ${pathToFileURL(path.join(here, 'gc-preload.js')).href}`);
  if (opts.length === 0) return undefined;
  env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${opts.join(' ')}`.trim();
  return env;
}
