/**
 * A private `redis-server` for one bench system (the `bullmq_hz100` variant):
 * a child process on a free 127.0.0.1 port, nothing on disk
 * (`--save "" --appendonly no`, a temp `--dir`), extra flags such as
 * `--hz 100`. Killed (SIGKILL: it holds nothing worth saving) and its
 * directory removed by the Resources scope it is registered with, and
 * SIGKILLed on process exit as a last resort. Same launch flags as the
 * tests' test/helpers/private-redis.ts, without its fault-injection parts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onExitKill, type Resources } from '../resources.js';

export interface PrivateRedisServer {
  url: string;
  port: number;
  pid: number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** PING on a fresh connection; true on +PONG within `timeoutMs`. */
function ping(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString();
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
    sock.on('error', () => done(false));
  });
}

async function launch(extraArgs: string[], res: Resources): Promise<PrivateRedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tl-peers-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--protected-mode', 'no', '--dir', dir, '--loglevel', 'warning', ...extraArgs];
  // Its own process group: a terminal's Ctrl-C reaches the bench, which closes its clients first and
  // then stops the server (killed with the group, the server would leave those clients hanging).
  const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output: string[] = [];
  const keep = (d: Buffer): void => {
    output.push(...d.toString().split('\n').filter(Boolean));
    if (output.length > 50) output.splice(0, output.length - 50);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = child.exitCode !== null;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  child.once('error', (err) => output.push(`spawn: ${err.message}`));
  const unregister = onExitKill(() => child.kill('SIGKILL'));
  res.defer(`stop redis-server :${port}`, async () => {
    if (!exited) child.kill('SIGKILL');
    await Promise.race([gone, sleep(5_000)]);
    unregister();
    rmSync(dir, { recursive: true, force: true });
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await ping(port, 300)) return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid ?? 0 };
    if (exited) throw new Error(`redis-server :${port} exited at start: ${output.slice(-3).join(' | ')}`);
    if (Date.now() > deadline) throw new Error(`redis-server :${port} not ready within 10 s: ${output.slice(-3).join(' | ')}`);
    await sleep(50);
  }
}

/** Starts one (a second attempt on another port if the first port was taken meanwhile). */
export async function startPrivateRedis(extraArgs: string[], res: Resources): Promise<PrivateRedisServer> {
  try {
    return await launch(extraArgs, res);
  } catch (err) {
    if (!/exited at start/.test((err as Error).message)) throw err;
    return launch(extraArgs, res);
  }
}
