/**
 * A private PostgreSQL server for fault tests: its own data directory (under
 * the OS temp dir) and its own port, so a test may stop, crash (kill -9) and
 * restart it without touching the shared server.
 *
 * Postgres refuses to run as root, so when this process is root the server
 * binaries (initdb, pg_ctl, on PATH) run as the `postgres` user via
 * `runuser`, and the data directory is handed to that user.
 *
 * States: created (initdb done, not running) → running (start()) →
 * stopped (stop() / kill9()) → running again on the same port and data
 * (start()) … → destroyed (destroy(): stopped and the directory removed).
 *
 *   const pg = await PrivatePostgres.create();
 *   await pg.start();            // pg.url: postgres://postgres@127.0.0.1:<port>/postgres
 *   await pg.stop({ mode: 'immediate' });
 *   await pg.kill9();             // postmaster and every backend, SIGKILL
 *   await pg.destroy();
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { userInfo, tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { track, untrack } from './tracked.js';

export interface PrivatePostgresOptions {
  /** Port to listen on. Default: a free one. */
  port?: number;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
  /** OS user that runs the server when we are root. @defaultValue 'postgres' */
  runAs?: string;
}

export type StopMode = 'immediate' | 'fast' | 'smart';

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

function run(cmd: string, args: string[], runAs: string | null, timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  const [file, argv] = runAs ? ['runuser', ['-u', runAs, '--', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Running (a zombie, killed but not yet reaped by its parent, counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

export class PrivatePostgres {
  readonly dir: string;
  readonly dataDir: string;
  readonly socketDir: string;
  readonly logFile: string;
  private readonly runAs: string | null;
  private destroyed = false;

  private constructor(
    readonly port: number,
    dir: string,
    runAs: string | null,
    private readonly settings: Record<string, string | number>,
  ) {
    this.dir = dir;
    this.dataDir = path.join(dir, 'data');
    this.socketDir = dir;
    this.logFile = path.join(dir, 'postgres.log');
    this.runAs = runAs;
  }

  /** initdb into a fresh temp directory (trust auth, user `postgres`). Not started yet. */
  static async create(opts: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
    const runAs = isRoot() ? (opts.runAs ?? 'postgres') : null;
    const dir = mkdtempSync(path.join(tmpdir(), 'tl-private-pg-'));
    if (runAs) {
      const { uid, gid } = lookupUser(runAs);
      chownSync(dir, uid, gid);
    }
    const port = opts.port ?? (await freePort());
    // fsync off is safe for what the tests do (process crashes, not OS crashes); synchronous_commit
    // must stay on: off loses acknowledged commits when the server is killed.
    const settings = { fsync: 'off', full_page_writes: 'off', max_connections: 100, ...opts.settings };
    const p = new PrivatePostgres(port, dir, runAs, settings);
    try {
      await run('initdb', ['-D', p.dataDir, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], runAs);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return track(p, `private postgres :${port}`);
  }

  /** Connection string of the `postgres` database (or another one). */
  urlFor(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  get url(): string {
    return this.urlFor();
  }

  /** The postmaster's pid, from postmaster.pid (0 when not running). */
  get pid(): number {
    const file = path.join(this.dataDir, 'postmaster.pid');
    if (!existsSync(file)) return 0;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : 0;
  }

  get running(): boolean {
    return this.pid !== 0;
  }

  /** Starts the server (same port and data as before) and waits until it accepts connections. */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.destroyed) throw new Error('PrivatePostgres: destroyed');
    const opts = [
      `-p ${this.port}`,
      `-k ${this.socketDir}`,
      `-c listen_addresses=127.0.0.1`,
      ...Object.entries(this.settings).map(([k, v]) => `-c ${k}=${v}`),
    ].join(' ');
    await run('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-o', opts, '-w', '-t', String(Math.ceil(timeoutMs / 1000)), 'start'], this.runAs, timeoutMs + 5_000);
    await this.waitReady(timeoutMs);
  }

  /** pg_ctl stop: 'immediate' (no shutdown checkpoint; crash recovery on restart), 'fast' or 'smart'. */
  async stop(opts: { mode?: StopMode } = {}): Promise<void> {
    if (!this.running) return;
    await run('pg_ctl', ['-D', this.dataDir, '-m', opts.mode ?? 'fast', '-w', '-t', '30', 'stop'], this.runAs, 40_000);
  }

  /** kill -9 of the postmaster and all its backends (a machine-level crash of the server). */
  async kill9(): Promise<void> {
    const pid = this.pid;
    if (!pid) return;
    const children = childPids(pid);
    for (const p of [pid, ...children]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    const deadline = Date.now() + 10_000;
    while ([pid, ...children].some(alive) && Date.now() < deadline) await sleep(20);
    // The killed postmaster may linger as a zombie until its (re)parent reaps it, and
    // postgres would take that pid for a live server holding the lock files. Every
    // process is dead, so they are stale: remove them, as the next start would once
    // the pid is gone. (Crash recovery is driven by pg_control, not by these files.)
    rmSync(path.join(this.dataDir, 'postmaster.pid'), { force: true });
    rmSync(path.join(this.socketDir, `.s.PGSQL.${this.port}.lock`), { force: true });
  }

  /** Creates a database on the running server. */
  async createDatabase(name: string): Promise<string> {
    const c = new pg.Client({ connectionString: this.url });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${name}`);
    } finally {
      await c.end();
    }
    return this.urlFor(name);
  }

  /** Stops the server (immediate) and removes its directory. Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    try {
      await this.stop({ mode: 'immediate' }).catch(() => this.kill9());
      if (this.running) await this.kill9();
    } finally {
      this.destroyed = true;
      rmSync(this.dir, { recursive: true, force: true });
      untrack(this);
    }
  }

  /** The server's log (for failure messages). */
  log(lastLines = 30): string {
    if (!existsSync(this.logFile)) return '';
    return readFileSync(this.logFile, 'utf8').split('\n').slice(-lastLines).join('\n');
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2_000 });
      try {
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        return;
      } catch (err) {
        await c.end().catch(() => undefined);
        if (Date.now() > deadline) throw new Error(`private postgres on ${this.port} not ready: ${String(err)}\n${this.log()}`);
        await sleep(100);
      }
    }
  }
}

function lookupUser(name: string): { uid: number; gid: number } {
  if (name === userInfo().username) return { uid: userInfo().uid, gid: userInfo().gid };
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`PrivatePostgres: no such user "${name}"`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Direct children of `pid`, read from /proc (Linux). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return out;
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(e));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}
