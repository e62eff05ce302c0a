/**
 * The deployment files in ops/ checked against the code: every YAML document
 * parses; every container that runs timelane invokes an existing subcommand
 * with flags and environment variables that exist (OPTION_SPECS and the
 * registered CLI commands) and values that pass the daemon's own validation;
 * probes hit the gRPC port; the systemd unit and its env file only use known
 * settings; and the StatefulSet's shard-range script, run in a real shell,
 * gives every shard 0..S-1 to exactly one ordinal.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { OPTION_SPECS, parseShardRanges, resolveConfig, type DaemonConfig } from '../../daemon/config.js';
import { registerDaemonCommands } from '../../daemon/commands.js';
import { LIVENESS_SERVICE } from '../../daemon/grpc/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const K8S_DIR = path.join(ROOT, 'ops/k8s');
const SYSTEMD_DIR = path.join(ROOT, 'ops/systemd');
const CLI = 'dist/clients/cli/cli.js';

const SPEC_BY_FLAG = new Map(OPTION_SPECS.map((s) => [s.flag.split(' ')[0], s]));
const OPTION_ENV = OPTION_SPECS.map((s) => s.env);
/** Read by node itself, not by timelane. */
const RUNTIME_ENV = new Set(['NODE_OPTIONS', 'NODE_ENV']);
/** Stand-ins for values the cluster fills in (secrets, downward API). */
const SECRET_SAMPLES: Record<string, string> = { DATABASE_URL: 'postgres://timelane:pw@db:5432/timelane', REDIS_URL: 'redis://redis:6379/0' };
const POD_IP_SAMPLE = '10.1.2.3';

// ----------------------------------------------------------- k8s shapes ---

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface Probe {
  grpc?: { port: number; service?: string };
  [other: string]: unknown;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; secret?: { secretName: string } }[];
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> } | Record<string, string>;
    podSelector?: { matchLabels?: Record<string, string> };
    template?: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
    ports?: { name?: string; port: number; targetPort?: number | string }[];
  };
}

interface ManifestFile {
  file: string;
  objects: K8sObject[];
}

function loadManifests(): ManifestFile[] {
  return readdirSync(K8S_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((file) => {
      const docs = parseAllDocuments(readFileSync(path.join(K8S_DIR, file), 'utf8'));
      const list = Array.isArray(docs) ? docs : [docs];
      const objects = list.map((doc, i) => {
        expect(doc.errors.map(String), `${file} document ${i}`).toEqual([]);
        return doc.toJS() as K8sObject;
      });
      return { file, objects };
    });
}

const MANIFESTS = loadManifests();

interface Workload {
  file: string;
  obj: K8sObject;
  container: Container;
}

/** Every container of every pod template that runs the timelane CLI. */
function timelaneContainers(): Workload[] {
  const out: Workload[] = [];
  for (const { file, objects } of MANIFESTS)
    for (const obj of objects) {
      const pod = obj.spec?.template?.spec;
      for (const container of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])])
        if (invocationText(container).includes(CLI) || container.image.includes('timelane')) out.push({ file, obj, container });
    }
  return out;
}

function invocationText(c: Container): string {
  return [...(c.command ?? []), ...(c.args ?? [])].join(' ');
}

function isShellScript(c: Container): boolean {
  return (c.command?.[0] ?? '').endsWith('sh') && c.command?.[1] === '-c';
}

/** Environment as the kubelet would give it: literals with $(VAR) expanded, samples for secrets and fields. */
function resolvedEnv(c: Container, podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of c.env ?? []) {
    if (v.value !== undefined) env[v.name] = v.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => env[n] ?? m);
    else if (v.valueFrom?.secretKeyRef) env[v.name] = SECRET_SAMPLES[v.name] ?? 'secret';
    else if (v.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[v.name] = podName;
    else if (v.valueFrom?.fieldRef?.fieldPath === 'status.podIP') env[v.name] = POD_IP_SAMPLE;
  }
  return env;
}

// ---------------------------------------------------------------- shell ---

const stubDir = mkdtempSync(path.join(os.tmpdir(), 'timelane-ops-'));
// A `node` that prints its argv, one argument per line, instead of starting a daemon.
writeFileSync(path.join(stubDir, 'node'), '#!/bin/sh\nprintf \'%s\\n\' "$@"\n');
chmodSync(path.join(stubDir, 'node'), 0o755);
afterAll(() => rmSync(stubDir, { recursive: true, force: true }));

function runScript(shell: string, script: string, env: Record<string, string>): string[] {
  const out = execFileSync(shell, ['-c', script], {
    env: { ...env, PATH: `${stubDir}:/usr/bin:/bin` },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out.split('\n').filter((l) => l !== '');
}

/** The CLI argv a container would run: [subcommand, ...flags]. Shell entrypoints are executed with a stub node. */
function cliArgv(w: Workload, podName: string, extraEnv: Record<string, string> = {}): string[] {
  const c = w.container;
  const argv = isShellScript(c) ? runScript('bash', c.command![2], { ...resolvedEnv(c, podName), HOSTNAME: podName, ...extraEnv }) : [...(c.command ?? []), ...(c.args ?? [])];
  const at = argv.findIndex((a) => a.endsWith(CLI));
  expect(at, `${w.file} ${c.name}: runs ${CLI}`).toBeGreaterThanOrEqual(0);
  return argv.slice(at + 1);
}

/** Parses `--flag value`, `--flag=value` and boolean `--flag` with the daemon's option specs. */
function parseFlags(args: string[]): Partial<Record<keyof DaemonConfig, unknown>> {
  const flags: Partial<Record<keyof DaemonConfig, unknown>> = {};
  for (let i = 0; i < args.length; i++) {
    const [name, inline] = args[i].split(/=(.*)/s, 2);
    const spec = SPEC_BY_FLAG.get(name);
    if (!spec) throw new Error(`unknown flag ${args[i]}`);
    flags[spec.key] = spec.flag.includes('<') ? (inline ?? args[++i]) : true;
  }
  return flags;
}

function flagTokens(text: string): string[] {
  return [...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => `--${m[1]}`);
}

const program = new Command();
registerDaemonCommands(program);
const SUBCOMMAND_FLAGS = new Map(program.commands.map((c) => [c.name(), c.options.map((o) => o.long ?? '')]));
const DAEMON_FLAGS = [...SPEC_BY_FLAG.keys()];

function allowedFlags(subcommand: string): string[] {
  if (subcommand === 'daemon') return DAEMON_FLAGS;
  const flags = SUBCOMMAND_FLAGS.get(subcommand);
  if (!flags) throw new Error(`"timelane ${subcommand}" is not a command (known: ${[...SUBCOMMAND_FLAGS.keys()].join(', ')})`);
  return flags;
}

const workloads = timelaneContainers();

const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));
const isLoopback = (address: string): boolean => /^(127\.|localhost:|\[::1\]:)/.test(address);

// ---------------------------------------------------------------- tests ---

describe('ops/k8s manifests', () => {
  it('every document parses and names its apiVersion, kind and metadata.name', () => {
    expect(MANIFESTS.map((m) => m.file)).toEqual(expect.arrayContaining(['sidecar-pod.yaml', 'statefulset.yaml']));
    for (const { file, objects } of MANIFESTS)
      for (const o of objects) {
        expect(typeof o?.apiVersion, `${file}: apiVersion`).toBe('string');
        expect(typeof o?.kind, `${file}: kind`).toBe('string');
        expect(o.metadata?.name, `${file} ${o.kind}: metadata.name`).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      }
  });

  it('selectors match pod templates in the same file', () => {
    for (const { file, objects } of MANIFESTS) {
      const templates = objects.flatMap((o) => (o.spec?.template?.metadata?.labels ? [o.spec.template.metadata.labels] : []));
      const matches = (sel: Record<string, string>): boolean => templates.some((t) => Object.entries(sel).every(([k, v]) => t[k] === v));
      for (const o of objects) {
        const sel = o.kind === 'Service' ? (o.spec?.selector as Record<string, string>) : o.kind === 'NetworkPolicy' ? o.spec?.podSelector?.matchLabels : (o.spec?.selector as { matchLabels?: Record<string, string> })?.matchLabels;
        if (!sel) continue;
        expect(matches(sel), `${file} ${o.kind}/${o.metadata.name} selector ${JSON.stringify(sel)}`).toBe(true);
        const own = o.spec?.template?.metadata?.labels;
        if (own) expect(own, `${file} ${o.kind}/${o.metadata.name}: template labels include the selector`).toMatchObject(sel);
      }
    }
  });


  it('finds the timelane containers: sidecar, pinned, standby, migrate', () => {
    const found = workloads.map((w) => `${w.obj.kind}/${w.obj.metadata.name}`);
    expect(found).toEqual(expect.arrayContaining(['Deployment/my-app', 'Deployment/timelane-standby', 'Job/timelane-migrate', 'StatefulSet/timelane']));
  });

  it.each(workloads.map((w) => [`${w.file} ${w.obj.kind}/${w.obj.metadata.name}`, w] as const))('%s: subcommand, flags and env exist', (_label, w) => {
    const c = w.container;
    const podName = `${w.obj.metadata.name}-0`;
    const [subcommand, ...rest] = cliArgv(w, podName);
    const allowed = allowedFlags(subcommand);
    // Every flag written anywhere in command/args (script branches included) exists for the subcommand.
    for (const flag of flagTokens(invocationText(c)).filter((f) => f !== '--')) expect(allowed, `${c.name}: ${flag}`).toContain(flag);
    for (const flag of rest.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0])) expect(allowed, `${c.name}: ${flag}`).toContain(flag);

    const script = isShellScript(c) ? c.command![2] : '';
    const names = (c.env ?? []).map((e) => e.name);
    expect(new Set(names).size, `${c.name}: duplicate env names`).toBe(names.length);
    for (const e of c.env ?? []) {
      if (/^TIMELANE_/.test(e.name) || e.name === 'DATABASE_URL' || e.name === 'REDIS_URL') expect(OPTION_ENV, `${c.name}: env ${e.name}`).toContain(e.name);
      else if (!RUNTIME_ENV.has(e.name)) {
        // A helper variable: it must be used, by the script or by another variable's $(NAME).
        const used = new RegExp(`\\$\\{?${e.name}\\b|\\$\\(${e.name}\\)`).test(`${script} ${JSON.stringify(c.env)}`);
        expect(used, `${c.name}: env ${e.name} is neither a timelane setting nor used`).toBe(true);
      }
      if (e.name === 'DATABASE_URL' || e.name === 'REDIS_URL') expect(e.valueFrom?.secretKeyRef, `${c.name}: ${e.name} comes from a Secret`).toBeDefined();
    }
    // Every variable the script reads is assigned by it, defined in env, or HOSTNAME (set by the runtime).
    const locals = new Set([...script.matchAll(/^\s*([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]));
    for (const m of script.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g))
      if (m[1] !== 'HOSTNAME' && !locals.has(m[1])) expect(names, `${c.name}: script reads $${m[1]}`).toContain(m[1]);

    // The values pass the daemon's own validation.
    const config = resolveConfig(parseFlags(rest), resolvedEnv(c, podName));
    expect(config.databaseUrl).not.toBe('');
    if (subcommand !== 'daemon') return;
    expect(config.redisUrl, `${c.name}: cluster mode needs REDIS_URL`).not.toBe('');
    expect(c.env?.find((e) => e.name === 'TIMELANE_MEMBER_ID')?.valueFrom?.fieldRef?.fieldPath, `${c.name}: member id is the pod name`).toBe('metadata.name');
    expect(isLoopback(config.grpcAddress), `${c.name}: probes need a non-loopback gRPC address`).toBe(false);
    expect(isLoopback(config.advertiseAddress) || config.advertiseAddress.startsWith('0.0.0.0'), `${c.name}: advertise a reachable address`).toBe(false);
    expect(config.metricsAddress === '' || isLoopback(config.metricsAddress), `${c.name}: metrics must be scrapeable`).toBe(false);
    // Secured: TLS, and tokens and/or client certificates, each file mounted from a Secret.
    expect(config.insecure, `${c.name}: never --insecure`).toBe(false);
    expect(config.tlsCert, `${c.name}: TLS on`).not.toBe('');
    expect(config.authFile || config.tlsClientCa, `${c.name}: tokens or client certificates`).not.toBe('');
    const secretMounts = (c.volumeMounts ?? [])
      .filter((m) => (w.obj.spec?.template?.spec?.volumes ?? []).find((v) => v.name === m.name)?.secret !== undefined)
      .map((m) => m.mountPath);
    for (const file of [config.tlsCert, config.tlsKey, config.authFile, config.tlsClientCa].filter(Boolean))
      expect(secretMounts.some((dir) => file.startsWith(`${dir}/`)), `${c.name}: ${file} is in a Secret volume`).toBe(true);
  });

  it.each(workloads.filter((w) => w.obj.kind !== 'Job').map((w) => [`${w.obj.kind}/${w.obj.metadata.name}`, w] as const))(
    '%s: probes use grpc on the health port (plaintext: kubelet probes speak no TLS), ports are declared',
    (_label, w) => {
      const c = w.container;
      const podName = `${w.obj.metadata.name}-0`;
      const config = resolveConfig(parseFlags(cliArgv(w, podName).slice(1)), resolvedEnv(c, podName));
      const grpcPort = portOf(config.grpcAddress);
      const probePort = config.tlsCert ? portOf(config.healthAddress) : grpcPort;
      expect(probePort, `${c.name}: a TLS daemon needs --health-address for its probes`).toBeGreaterThan(0);
      expect(isLoopback(config.healthAddress), `${c.name}: the kubelet reaches the health port`).toBe(false);
      expect(c.readinessProbe?.grpc?.port, `${c.name}: readinessProbe`).toBe(probePort);
      expect(c.livenessProbe?.grpc?.port, `${c.name}: livenessProbe`).toBe(probePort);
      // Readiness is the daemon's overall health (SERVING once its shards are held); liveness a service of its own.
      expect(c.readinessProbe?.grpc?.service ?? '', `${c.name}: readinessProbe service`).toBe('');
      expect(c.livenessProbe?.grpc?.service, `${c.name}: livenessProbe service`).toBe(LIVENESS_SERVICE);
      if (c.startupProbe) expect(c.startupProbe.grpc?.port, `${c.name}: startupProbe`).toBe(probePort);
      const ports = (c.ports ?? []).map((p) => p.containerPort);
      expect(ports).toContain(grpcPort);
      expect(ports).toContain(probePort);
      expect(ports).toContain(portOf(config.metricsAddress));
      expect(portOf(config.advertiseAddress)).toBe(grpcPort);
    },
  );

  it('Service target ports name ports of the timelane containers they select', () => {
    for (const { file, objects } of MANIFESTS)
      for (const svc of objects.filter((o) => o.kind === 'Service')) {
        const sel = svc.spec?.selector as Record<string, string>;
        const pods = workloads.filter((w) => w.file === file && Object.entries(sel).every(([k, v]) => w.obj.spec?.template?.metadata?.labels?.[k] === v));
        expect(pods.length, `${file} Service/${svc.metadata.name}`).toBeGreaterThan(0);
        for (const p of svc.spec?.ports ?? [])
          for (const w of pods) expect((w.container.ports ?? []).map((cp) => (typeof p.targetPort === 'string' ? cp.name : cp.containerPort))).toContain(p.targetPort ?? p.port);
      }
  });
});

describe('StatefulSet shard-range entrypoint', () => {
  const sts = workloads.find((w) => w.obj.kind === 'StatefulSet')!;
  const job = workloads.find((w) => w.obj.kind === 'Job')!;
  const script = sts.container.command![2];
  const envOf = (name: string): string => sts.container.env?.find((e) => e.name === name)?.value ?? '';
  const S = Number(envOf('TIMELANE_SHARD_COUNT'));
  const N = Number(envOf('REPLICAS'));
  const baseEnv = resolvedEnv(sts.container, 'unused');

  it('REPLICAS matches spec.replicas and S matches the migrate Job', () => {
    expect(sts.container.command?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(N).toBe(sts.obj.spec?.replicas);
    expect(S).toBe(Number(parseFlags(cliArgv(job, 'migrate').slice(1)).shardCount));
  });

  const shells = ['bash', 'sh'];
  const cases: [number, number][] = [[S, N], [256, 3], [64, 64], [10, 3], [7, 1], [1000, 7]];
  it.each(shells.flatMap((sh) => cases.map(([s, n]) => [sh, s, n] as const)))('%s: S=%i N=%i covers every shard exactly once', (shell, s, n) => {
    const owners = new Array<number>(s).fill(0);
    for (let k = 0; k < n; k++) {
      const argv = runScript(shell, script, { ...baseEnv, TIMELANE_SHARD_COUNT: String(s), REPLICAS: String(n), HOSTNAME: `${sts.obj.metadata.name}-${k}` });
      const at = argv.indexOf('--shards');
      expect(at, `ordinal ${k}: --shards passed`).toBeGreaterThan(0);
      const range = parseShardRanges(argv[at + 1], s);
      expect(range.length, `ordinal ${k}: non-empty range`).toBeGreaterThan(0);
      for (const shard of range) owners[shard]++;
    }
    expect(owners.every((c) => c === 1), `owners per shard: ${owners.join(',')}`).toBe(true);
  });

  it.each(shells)('%s: refuses an ordinal >= REPLICAS and a HOSTNAME without one', (shell) => {
    const env = { ...baseEnv, TIMELANE_SHARD_COUNT: String(S), REPLICAS: String(N) };
    expect(() => runScript(shell, script, { ...env, HOSTNAME: `timelane-${N}` })).toThrow(/REPLICAS/);
    expect(() => runScript(shell, script, { ...env, HOSTNAME: 'timelane' })).toThrow(/ordinal/);
  });
});

describe('ops/systemd', () => {
  const unit = readFileSync(path.join(SYSTEMD_DIR, 'timelane.service'), 'utf8');
  const directives = unit
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !l.startsWith(';') && !l.startsWith('['))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
  const values = (key: string): string[] => directives.filter(([k]) => k === key).map(([, v]) => v);

  const envFile = readFileSync(path.join(SYSTEMD_DIR, 'timelane.env'), 'utf8').split('\n');
  const assignments = envFile.flatMap((l) => (/^[A-Z][A-Z0-9_]*=/.test(l) ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const] : []));
  const examples = envFile.flatMap((l) => {
    const m = /^#\s*([A-Z][A-Z0-9_]*)=(.*)$/.exec(l);
    return m ? [[m[1], m[2]] as const] : [];
  });
  const unitEnv = Object.fromEntries(
    values('Environment').map((v) => {
      const [name, value] = v.split(/=(.*)/s, 2);
      return [name, value.replace(/%H/g, 'host-a')];
    }),
  );

  it('ExecStart runs `node …/dist/clients/cli/cli.js daemon` with known flags', () => {
    const [exec] = values('ExecStart');
    const argv = exec.split(/\s+/);
    expect(argv[0]).toBe('/usr/bin/node');
    expect(argv[1]).toMatch(/\/dist\/clients\/cli\/cli\.js$/);
    expect(SUBCOMMAND_FLAGS.has(argv[2])).toBe(true);
    expect(argv[2]).toBe('daemon');
    for (const flag of flagTokens(argv.slice(3).join(' '))) expect(DAEMON_FLAGS).toContain(flag);
  });

  it('restarts always, stops with SIGTERM within a timeout, reads the env file', () => {
    expect(values('Restart')).toEqual(['always']);
    expect(values('KillSignal')).toEqual(['SIGTERM']);
    expect(values('TimeoutStopSec')).toHaveLength(1);
    expect(values('EnvironmentFile').map((f) => path.basename(f.replace(/^-/, '')))).toEqual(['timelane.env']);
    expect(values('NoNewPrivileges')).toEqual(['yes']);
  });

  it('sets only known variables (unit and env file), with valid values', () => {
    for (const name of Object.keys(unitEnv)) if (!RUNTIME_ENV.has(name)) expect(OPTION_ENV, `unit Environment=${name}`).toContain(name);
    for (const [name] of [...assignments, ...examples]) expect(OPTION_ENV, `timelane.env: ${name}`).toContain(name);
    expect(assignments.map(([n]) => n)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL']));
    const active = { ...unitEnv, ...Object.fromEntries(assignments) };
    const config = resolveConfig({}, active);
    expect(config.memberId).toBe('host-a');
    for (const [name, value] of examples) expect(() => resolveConfig({}, { ...active, [name]: value }), `example ${name}=${value}`).not.toThrow();
  });
});
