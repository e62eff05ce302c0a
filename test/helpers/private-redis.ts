/**
 * A private Redis for fault tests: `redis-server` as a child process (no
 * daemonize, no persistence) on a free port, that a test may stop (SIGTERM),
 * kill -9, restart on the same port (it comes back EMPTY: nothing on disk),
 * or make unreachable for a while (SIGSTOP … SIGCONT: the TCP connections stay
 * up but nothing answers, like a partition; or stop it and start it later).
 *
 * Every instance is registered with test/helpers/tracked.ts (the leak guard
 * fails a file that forgets `close()`), and killed on process exit as a last
 * resort. Its working directory is a temp dir removed by `close()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './e2e.js';
import { track, untrack } from './tracked.js';

/** Children still alive, killed if the test process exits without cleaning up. */
const children = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of children) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

export interface PrivateRedisOptions {
  /** Port to listen on; default a free one. */
  port?: number;
  /** redis-server binary. @defaultValue 'redis-server' (PATH) */
  binary?: string;
  /** Forward the server's output (debugging). */
  echo?: boolean;
  /** More redis-server arguments (e.g. a TLS port besides the plain one readiness is checked on). */
  extraArgs?: string[];
}

/** Sends PING on a fresh TCP connection; resolves true on +PONG within `timeoutMs`. */
export function pingRedis(port: number, timeoutMs = 500, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
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

export class PrivateRedis {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private paused = false;
  private closed = false;
  readonly dir: string;
  /** Lines the server printed (last 200). */
  readonly output: string[] = [];

  private constructor(
    readonly port: number,
    private readonly binary: string,
    private readonly echo: boolean,
    private readonly extraArgs: readonly string[] = [],
  ) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'tl-redis-'));
  }

  static async start(opts: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    installExitHook();
    const r = new PrivateRedis(opts.port ?? (await freePort()), opts.binary ?? 'redis-server', opts.echo ?? false, opts.extraArgs ?? []);
    track(r, `private redis :${r.port}`);
    try {
      await r.launch();
    } catch (err) {
      await r.close();
      throw err;
    }
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  /** A server process exists (it may be paused). */
  get running(): boolean {
    return this.child !== null;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  private async launch(timeoutMs = 10_000): Promise<void> {
    if (this.closed) throw new Error('private redis: closed');
    if (this.child) throw new Error('private redis: already running');
    const args = [
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--protected-mode', 'no',
      '--dir', this.dir,
      '--loglevel', 'warning',
      ...this.extraArgs,
    ];
    const child = spawn(this.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    children.add(child);
    this.paused = false;
    const onOut = (d: Buffer): void => {
      const s = d.toString();
      if (this.echo) process.stderr.write(`[redis :${this.port}] ${s}`);
      this.output.push(...s.split('\n').filter(Boolean));
      if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
    };
    child.stdout!.on('data', onOut);
    child.stderr!.on('data', onOut);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        if (this.child === child) {
          this.child = null;
          this.paused = false;
        }
        resolve();
      }),
    );
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await pingRedis(this.port, 300)) return;
      if (this.child !== child) {
        const err = await Promise.race([spawnError, sleep(50).then(() => null)]);
        throw new Error(`private redis :${this.port} exited at start${err ? `: ${err.message}` : ''}; output: ${this.output.slice(-5).join(' | ')}`);
      }
      if (Date.now() > deadline) throw new Error(`private redis :${this.port} not ready within ${timeoutMs} ms; output: ${this.output.slice(-5).join(' | ')}`);
      await sleep(50);
    }
  }

  private async signalAndWait(sig: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = this.exited;
    if (this.paused && sig !== 'SIGKILL') child.kill('SIGCONT');
    child.kill(sig);
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  }

  /** SIGTERM and wait for the exit. Keys are gone (no persistence). */
  async stop(graceMs = 5_000): Promise<void> {
    await this.signalAndWait('SIGTERM', graceMs);
  }

  /** kill -9 and wait for the exit. */
  async kill9(): Promise<void> {
    await this.signalAndWait('SIGKILL', 0);
  }

  /** Starts the server again on the same port (stopping it first if needed). It comes back empty. */
  async restart(): Promise<void> {
    if (this.child) await this.kill9();
    // The port is normally free at once (redis sets SO_REUSEADDR); retry briefly if not.
    const deadline = Date.now() + 5_000;
    for (;;) {
      try {
        await this.launch();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(100);
      }
    }
  }

  /** SIGSTOP: connections stay open, nothing answers (a partition, as clients see it). */
  pause(): void {
    if (!this.child) throw new Error('private redis: not running');
    this.child.kill('SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT after pause(). */
  resume(): void {
    if (!this.child) return;
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  /**
   * Unreachable for `ms`: 'pause' (SIGSTOP … SIGCONT, keys kept) or 'stop'
   * (SIGTERM … restart on the same port, keys lost). Resolves once it answers again.
   */
  async unreachableFor(ms: number, mode: 'pause' | 'stop' = 'pause'): Promise<void> {
    if (mode === 'pause') {
      this.pause();
      await sleep(ms);
      this.resume();
      await this.waitReady();
    } else {
      await this.stop();
      await sleep(ms);
      await this.restart();
    }
  }

  /** Polls PING until it answers (true) or `timeoutMs` passes (false). */
  async waitReady(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await pingRedis(this.port, 300)) return true;
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
  }

  /** Kills the server (resuming it first if paused), removes its directory, untracks. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.child) {
      if (this.paused) this.child.kill('SIGCONT');
      await this.signalAndWait('SIGKILL', 0);
    }
    rmSync(this.dir, { recursive: true, force: true });
    untrack(this);
  }
}
