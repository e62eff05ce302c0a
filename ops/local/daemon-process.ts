/**
 * Runs a timelane daemon as a child process (the compiled CLI in dist/), for
 * end-to-end tests, fault tests, benchmarks and local clusters. Waits for the
 * "timelane daemon started" log line and reads the bound gRPC port from it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export interface DaemonProcessOptions {
  /** Extra CLI flags, e.g. ['--member-id', 'a', '--shards', '0-7']. */
  args?: string[];
  databaseUrl: string;
  redisUrl?: string;
  /** Environment added to the child's. */
  env?: Record<string, string>;
  /** Wait this long for the start line. @defaultValue 30000 */
  startTimeoutMs?: number;
  /** Forward the child's output to ours (debugging). */
  echo?: boolean;
}

export interface DaemonLogLine {
  msg?: string;
  level?: number;
  [k: string]: unknown;
}

/** Finds dist/clients/cli/cli.js from the sources or from dist. */
export function cliPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'dist', 'clients', 'cli', 'cli.js');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('dist/clients/cli/cli.js not found: run `npm run build` first');
    dir = parent;
  }
}

export class DaemonProcess {
  readonly child: ChildProcess;
  readonly logs: DaemonLogLine[] = [];
  port = 0;
  private exited: Promise<number | null>;
  private exitCode: number | null | undefined = undefined;

  private constructor(child: ChildProcess, echo: boolean) {
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
    void this.exited.then((c) => (this.exitCode = c));
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (echo) process.stdout.write(`[daemon ${child.pid}] ${line}\n`);
      try {
        this.logs.push(JSON.parse(line) as DaemonLogLine);
      } catch {
        this.logs.push({ msg: line });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (echo) process.stderr.write(d);
      this.logs.push({ msg: d.toString(), level: 50 });
    });
  }

  static async start(opts: DaemonProcessOptions): Promise<DaemonProcess> {
    const args = [cliPath(), 'daemon', '--database-url', opts.databaseUrl, ...(opts.redisUrl ? ['--redis-url', opts.redisUrl] : [])];
    const extra = opts.args ?? [];
    if (!extra.includes('--grpc-address')) args.push('--grpc-address', '127.0.0.1:0');
    if (!extra.includes('--metrics-address')) args.push('--metrics-address', '');
    args.push(...extra);
    // Local daemons (tests, benchmarks, local clusters) run open unless given credentials.
    const secured = extra.includes('--auth-file') || extra.includes('--tls-client-ca') || opts.env?.TIMELANE_AUTH_FILE !== undefined;
    const child = spawn(process.execPath, args, {
      env: { ...process.env, TIMELANE_LOG_LEVEL: process.env.TIMELANE_LOG_LEVEL ?? 'info', ...(secured ? {} : { TIMELANE_INSECURE: '1' }), ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const d = new DaemonProcess(child, opts.echo ?? false);
    await d.waitForLog((l) => l.msg === 'timelane daemon started', opts.startTimeoutMs ?? 30_000);
    const started = d.logs.find((l) => l.msg === 'timelane daemon started');
    d.port = Number(String(started?.grpc ?? '').split(':').pop());
    return d;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Resolves when a log line matches; rejects on timeout or exit. */
  async waitForLog(match: (l: DaemonLogLine) => boolean, timeoutMs = 10_000): Promise<DaemonLogLine> {
    const deadline = Date.now() + timeoutMs;
    let seen = 0;
    for (;;) {
      for (; seen < this.logs.length; seen++) if (match(this.logs[seen])) return this.logs[seen];
      if (!this.running) throw new Error(`daemon exited (${this.exitCode}) before the expected log line; last: ${this.tail()}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for a daemon log line; last: ${this.tail()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  tail(n = 5): string {
    return this.logs
      .slice(-n)
      .map((l) => JSON.stringify(l))
      .join('\n');
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.child.kill(sig);
  }

  /** kill -9. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.exited;
  }

  /** SIGTERM and wait (falls back to SIGKILL after `graceMs`). */
  async stop(graceMs = 10_000): Promise<number | null> {
    if (!this.running) return this.exitCode ?? null;
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    const t = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}
