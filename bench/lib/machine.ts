/**
 * What machine a result was measured on: CPU model, cores, memory, Node,
 * Postgres and Redis versions. One line for humans, one object for JSON.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memory_gib: number;
  node: string;
  postgres: string;
  redis: string;
  kernel: string;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1].trim().replace(/\s+/g, ' ');
  } catch {
    /* not Linux: fall back to os.cpus() */
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

async function postgresVersion(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await c.connect();
  try {
    const { rows } = await c.query<{ version: string }>('SELECT version()');
    const full = rows[0]?.version ?? 'unknown';
    return /^PostgreSQL \S+/.exec(full)?.[0] ?? full;
  } finally {
    await c.end();
  }
}

async function redisVersion(url: string): Promise<string> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await r.connect();
    const info = await r.info('server');
    return `Redis ${/^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown'}`;
  } finally {
    r.disconnect();
  }
}

export async function machineInfo(adminUrl: string, redisUrl: string): Promise<MachineInfo> {
  const [postgres, redis] = await Promise.all([
    postgresVersion(adminUrl).catch((e: unknown) => `PostgreSQL ? (${String(e)})`),
    redisVersion(redisUrl).catch((e: unknown) => `Redis ? (${String(e)})`),
  ]);
  return {
    cpu: cpuModel(),
    cores: os.availableParallelism?.() ?? os.cpus().length,
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    redis,
    kernel: `${os.type()} ${os.release()}`,
  };
}

export function machineLine(m: MachineInfo): string {
  return `machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, node ${m.node}, ${m.postgres}, ${m.redis}, ${m.kernel}`;
}
