/**
 * A private PostgreSQL for fault tests: its own data directory (initdb, trust
 * auth, fsync off — safe here: only the server process dies, never the OS —
 * but synchronous_commit stays on, so a commit acknowledged before an
 * immediate stop or kill -9 survives it), the postmaster run directly as a child process (as the
 * `postgres` user when we are root: Postgres refuses to run as root) on a
 * free port, that a test may stop (fast or immediate), kill -9 and start
 * again on the same port with the same data (crash recovery on start).
 *
 * Registered with test/helpers/tracked.ts; `close()` kills it and removes the
 * directory; the process is also killed on test-process exit as a last resort.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './e2e.js';
import { track, untrack } from './tracked.js';

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
        /* gone */
      }
    }
  });
}

/** Directory of the Postgres binaries (PG_BIN, or where `postgres` on PATH points, or Debian's 15). */
function binDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  try {
    const p = execFileSync('sh', ['-c', 'readlink -f "$(command -v postgres)"'], { encoding: 'utf8' }).trim();
    if (p) return path.dirname(p);
  } catch {
    /* fall through */
  }
  return '/usr/lib/postgresql/15/bin';
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function runAsPostgres(): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export interface PrivatePostgresOptions {
  port?: number;
  echo?: boolean;
}

export class PrivatePostgres {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private closed = false;
  readonly output: string[] = [];

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly bin: string,
    private readonly runAs: RunAs,
    private readonly echo: boolean,
  ) {}

  static async start(opts: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
    installExitHook();
    const bin = binDir();
    const runAs = runAsPostgres();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tl-pg-'));
    if (runAs.uid !== undefined) chownSync(dir, runAs.uid, runAs.gid!);
    const p = new PrivatePostgres(opts.port ?? (await freePort()), dir, bin, runAs, opts.echo ?? false);
    track(p, `private postgres :${p.port}`);
    try {
      execFileSync(path.join(bin, 'initdb'), ['-D', p.dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C'], {
        ...runAs,
        cwd: dir,
        env: { ...process.env, HOME: dir },
        stdio: 'pipe',
      });
      await p.launch();
    } catch (err) {
      await p.close();
      throw err;
    }
    return p;
  }

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  /** Superuser URL of the `postgres` database. */
  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  get running(): boolean {
    return this.child !== null;
  }

  private async launch(timeoutMs = 30_000): Promise<void> {
    if (this.closed) throw new Error('private postgres: closed');
    if (this.child) throw new Error('private postgres: already running');
    const args = [
      '-D', this.dataDir,
      '-p', String(this.port),
      '-k', this.dir,
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'fsync=off',
      '-c', 'full_page_writes=off',
      '-c', 'max_connections=200',
      '-c', 'shared_buffers=32MB',
    ];
    const child = spawn(path.join(this.bin, 'postgres'), args, { ...this.runAs, cwd: this.dir, env: { ...process.env, HOME: this.dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    children.add(child);
    const onOut = (d: Buffer): void => {
      const s = d.toString();
      if (this.echo) process.stderr.write(`[pg :${this.port}] ${s}`);
      this.output.push(...s.split('\n').filter(Boolean));
      if (this.output.length > 300) this.output.splice(0, this.output.length - 300);
    };
    child.stdout!.on('data', onOut);
    child.stderr!.on('data', onOut);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        children.delete(child);
        if (this.child === child) this.child = null;
        resolve();
      }),
    );
    child.once('error', () => undefined);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await this.ping()) return;
      if (this.child !== child) throw new Error(`private postgres :${this.port} exited at start: ${this.output.slice(-5).join(' | ')}`);
      if (Date.now() > deadline) throw new Error(`private postgres :${this.port} not ready within ${timeoutMs} ms: ${this.output.slice(-5).join(' | ')}`);
      await sleep(100);
    }
  }

  /** True when a connection and `SELECT 1` succeed. */
  async ping(): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.adminUrl, connectionTimeoutMillis: 1_000 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  private async signalAndWait(sig: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = this.exited;
    child.kill(sig);
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  }

  /** `pg_ctl stop -m immediate`: SIGQUIT to the postmaster (no checkpoint; recovery on next start). */
  async stopImmediate(): Promise<void> {
    await this.signalAndWait('SIGQUIT', 10_000);
  }

  /** `pg_ctl stop -m fast`: SIGINT (sessions terminated, checkpoint). */
  async stopFast(): Promise<void> {
    await this.signalAndWait('SIGINT', 15_000);
  }

  /** kill -9 of the postmaster; its backends notice and exit on their own. */
  async kill9(): Promise<void> {
    await this.signalAndWait('SIGKILL', 0);
    // Orphaned backends hold the shared memory segment briefly; start() below retries.
  }

  /** Starts again on the same port and data directory (stopping it first if running). */
  async restart(): Promise<void> {
    if (this.child) await this.stopImmediate();
    await this.start();
  }

  /** Starts a stopped server on the same port and data directory. */
  async start(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await this.launch();
        return;
      } catch (err) {
        if (Date.now() > deadline || this.closed) throw err;
        await sleep(200);
      }
    }
  }

  /** Kills the server, removes its directory, untracks. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.child) await this.signalAndWait('SIGQUIT', 5_000);
    rmSync(this.dir, { recursive: true, force: true });
    untrack(this);
  }
}
