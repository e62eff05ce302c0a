/**
 * Daemon configuration: one typed options object, each option with its
 * default, environment variable and meaning. Flags override environment,
 * environment overrides defaults. Validated at start-up with a clear message.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';

/** Claim this long before due (the release gate hands the run out exactly at due). */
export const DEFAULT_CLAIM_AHEAD_MS = 100;

export interface DaemonConfig {
  /** Postgres connection string. Empty in embedded mode (set by `timelane dev`). */
  databaseUrl: string;
  /** Schema holding timelane's tables. */
  databaseSchema: string;
  /** Postgres pool size. */
  databasePoolSize: number;
  /** Redis connection string; empty => shard leases and fences live in Postgres. */
  redisUrl: string;
  /** PEM CA to verify Redis with (TLS: also with a `rediss://` URL); client certificate and key for Redis mTLS. */
  redisTlsCa: string;
  redisTlsCert: string;
  redisTlsKey: string;
  /** Prefix of every Redis key this cluster uses. */
  redisPrefix: string;
  /** This daemon's member id (unique in the cluster). */
  memberId: string;
  /** gRPC listen address host:port. */
  grpcAddress: string;
  /** Address peers and clients use to reach this daemon (defaults to grpcAddress). */
  advertiseAddress: string;
  /** Plaintext gRPC listener serving only grpc.health.v1 (kubelet probes cannot speak TLS); empty disables. */
  healthAddress: string;
  /** Prometheus metrics listen address host:port; empty disables. */
  metricsAddress: string;
  /** Web console listen address host:port (port 0: any free port); empty disables (the production default; `timelane dev` turns it on). */
  consoleAddress: string;
  /** Shard count used when the cluster is first initialised by `migrate`. */
  shardCount: number;
  /** Claim, answer and lease statements are cancelled past this (ms), and a connection silent 1 s longer is dropped; 0 = unbounded. */
  databaseStatementTimeoutMs: number;
  /** The graceful stop gets this long (ms) after SIGTERM/SIGINT, then the process exits with code 1; 0 = no limit. */
  stopTimeoutMs: number;
  /** V8's interrupt budget for this process (how soon a hot function is optimised); 0 = V8's own default. */
  jitInterruptBudget: number;
  warmUpRuns: number;
  /** Pin this daemon to a shard range ("0-63,128") — sidecar mode. Empty => balanced. */
  shards: string;
  /** Adopt shards whose pinned owner is gone (sidecar standby). */
  adoptOrphans: boolean;
  /** Own no balanced share: only orphaned pinned shards (implies adoptOrphans). */
  standby: boolean;
  /** How often membership heartbeats are written and the assignment recomputed, in ms. */
  membershipIntervalMs: number;
  /** Shard lease TTL in ms. */
  leaseTtlMs: number;
  /** Fast-lane window W in ms: runs due within it are kept in memory. */
  windowMs: number;
  materialiseAheadMs: number;
  /** Most runs kept in memory across all shards (back-pressure shrinks the window). */
  maxInWindow: number;
  /** Claim runs this long before due (released to workers exactly at due); 0 claims at due. */
  claimAheadMs: number;
  /** How often the loader extends the window, in ms. */
  loadIntervalMs: number;
  /** How often the repair scan re-reads the loaded window, in ms. */
  repairIntervalMs: number;
  /** How often expired delivery leases are reclaimed, in ms. */
  reapIntervalMs: number;
  /** Default delivery lease of a fired run, in ms. */
  defaultRunLeaseMs: number;
  /** Largest accepted payload, in bytes. */
  maxPayloadBytes: number;
  /** Apply migrations on start (embedded/dev mode); production runs `timelane migrate`. */
  migrateOnStart: boolean;
  /** Log level: fatal, error, warn, info, debug, trace, silent. */
  logLevel: string;
  /** Log format: json (production) or pretty (human-readable, `timelane dev`'s default). */
  logFormat: string;
  /**
   * OTLP/HTTP URL spans are exported to (README, Tracing). Empty: tracing is
   * off unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and then no tracing SDK is loaded.
   */
  otlpTracesEndpoint: string;
  /** PEM certificate and key of the gRPC and metrics listeners; empty: plaintext. */
  tlsCert: string;
  tlsKey: string;
  /** PEM CA: clients must present a certificate it signed (mTLS). */
  tlsClientCa: string;
  /** How often certificate and credentials files are re-read, in ms. */
  tlsReloadMs: number;
  /** Credentials file: hashed tokens and certificate subjects with their role and namespace. */
  authFile: string;
  /** Per-namespace quotas file (JSON: namespace → max_payload_bytes, schedules_per_second, max_scheduled_runs). */
  quotasFile: string;
  /** Run with no authentication at all (a production daemon refuses to without it). */
  insecure: boolean;
}

export interface OptionSpec {
  key: keyof DaemonConfig;
  flag: string;
  env: string;
  description: string;
  default: string | number | boolean;
}

/** Every setting, documented once: used by `--help`, the README table and validation. */
export const OPTION_SPECS: readonly OptionSpec[] = [
  { key: 'databaseUrl', flag: '--database-url <url>', env: 'DATABASE_URL', description: 'PostgreSQL connection string (required for `daemon`)', default: '' },
  { key: 'databaseSchema', flag: '--database-schema <name>', env: 'TIMELANE_DATABASE_SCHEMA', description: 'schema holding timelane tables', default: 'timelane' },
  { key: 'databasePoolSize', flag: '--database-pool-size <n>', env: 'TIMELANE_DATABASE_POOL_SIZE', description: 'Postgres connections in the pool', default: 16 },
  { key: 'databaseStatementTimeoutMs', flag: '--database-statement-timeout-ms <ms>', env: 'TIMELANE_DATABASE_STATEMENT_TIMEOUT_MS', description: 'the claim\'s, the answers\' and the leases\' Postgres statements are cancelled past this, and a connection that has not answered 1 s later is dropped, so a silent (half-open) connection cannot stall firing; 0 = unbounded. The window loader\'s and the API\'s statements are not bounded: one of theirs that has waited this long gets its backend looked up in pg_stat_activity (on a fresh connection), and its connection is dropped if the backend is not running it; the LISTEN connection is probed with SELECT 1 this often (0 turns both off)', default: 10_000 },
  { key: 'redisUrl', flag: '--redis-url <url>', env: 'REDIS_URL', description: 'Redis for shard leases and fencing tokens; unset => Postgres leases (single node)', default: '' },
  { key: 'redisTlsCa', flag: '--redis-tls-ca <file>', env: 'TIMELANE_REDIS_TLS_CA', description: 'PEM CA that signed the Redis server certificate (turns TLS on; a rediss:// URL alone uses the system roots)', default: '' },
  { key: 'redisTlsCert', flag: '--redis-tls-cert <file>', env: 'TIMELANE_REDIS_TLS_CERT', description: 'PEM client certificate for Redis (with --redis-tls-key; tls-auth-clients)', default: '' },
  { key: 'redisTlsKey', flag: '--redis-tls-key <file>', env: 'TIMELANE_REDIS_TLS_KEY', description: 'PEM private key of --redis-tls-cert', default: '' },
  { key: 'redisPrefix', flag: '--redis-prefix <prefix>', env: 'TIMELANE_REDIS_PREFIX', description: 'prefix of every Redis key', default: 'timelane:' },
  { key: 'memberId', flag: '--member-id <id>', env: 'TIMELANE_MEMBER_ID', description: 'unique member id of this daemon', default: `${os.hostname()}-${process.pid}` },
  { key: 'grpcAddress', flag: '--grpc-address <host:port>', env: 'TIMELANE_GRPC_ADDRESS', description: 'gRPC listen address', default: '127.0.0.1:7070' },
  { key: 'advertiseAddress', flag: '--advertise-address <host:port>', env: 'TIMELANE_ADVERTISE_ADDRESS', description: 'address clients use to reach this daemon (default: grpc address)', default: '' },
  { key: 'healthAddress', flag: '--health-address <host:port>', env: 'TIMELANE_HEALTH_ADDRESS', description: 'plaintext listener with only the gRPC health service, for probes that cannot speak TLS (kubelet); "" disables', default: '' },
  { key: 'metricsAddress', flag: '--metrics-address <host:port>', env: 'TIMELANE_METRICS_ADDRESS', description: 'Prometheus /metrics listen address; "" disables', default: '127.0.0.1:9464' },
  { key: 'consoleAddress', flag: '--console-address <host:port>', env: 'TIMELANE_CONSOLE_ADDRESS', description: 'web console listen address (port 0: any free port); "" disables. Off in `daemon`, 127.0.0.1:7080 in `dev`', default: '' },
  { key: 'shardCount', flag: '--shard-count <n>', env: 'TIMELANE_SHARD_COUNT', description: 'shards created by `migrate` on a new cluster (fixed afterwards)', default: 64 },
  { key: 'shards', flag: '--shards <ranges>', env: 'TIMELANE_SHARDS', description: 'pin to shard ranges, e.g. "0-63" (sidecar mode); empty => balanced share', default: '' },
  { key: 'adoptOrphans', flag: '--adopt-orphans', env: 'TIMELANE_ADOPT_ORPHANS', description: 'also own shards whose pinned owner is gone (standby)', default: false },
  { key: 'standby', flag: '--standby', env: 'TIMELANE_STANDBY', description: 'own no balanced share, only shards of pinned members that are gone (implies --adopt-orphans)', default: false },
  { key: 'membershipIntervalMs', flag: '--membership-interval-ms <ms>', env: 'TIMELANE_MEMBERSHIP_INTERVAL_MS', description: 'membership heartbeat and assignment period (members expire after 3 periods)', default: 1000 },
  { key: 'leaseTtlMs', flag: '--lease-ttl-ms <ms>', env: 'TIMELANE_LEASE_TTL_MS', description: 'shard lease TTL', default: 3000 },
  { key: 'windowMs', flag: '--window-ms <ms>', env: 'TIMELANE_WINDOW_MS', description: 'fast-lane window W: runs due within it are held in memory', default: 30_000 },
  { key: 'materialiseAheadMs', flag: '--materialise-ahead-ms <ms>', env: 'TIMELANE_MATERIALISE_AHEAD_MS', description: 'make recurring jobs\' occurrences into runs this far ahead (at least --window-ms; 0 => the window): a longer lead absorbs bigger bursts (many jobs due at one instant), but occurrences already made fire even after an outage (the catch-up rule decides only about those not made yet)', default: 0 },
  { key: 'maxInWindow', flag: '--max-in-window <n>', env: 'TIMELANE_MAX_IN_WINDOW', description: 'most runs held in memory (the window shrinks past it)', default: 1_000_000 },
  { key: 'claimAheadMs', flag: '--claim-ahead-ms <ms>', env: 'TIMELANE_CLAIM_AHEAD_MS', description: 'claim runs ahead of their due time, in buckets: each between half of this and all of it before due. A worker that stages runs (Subscribe.stage_ahead_ms; the TypeScript worker does) is handed it at once and starts it at due; any other gets it from the daemon at due. Takes the claim, the hand-off and the network off the critical path; 0 claims at due', default: DEFAULT_CLAIM_AHEAD_MS },
  { key: 'loadIntervalMs', flag: '--load-interval-ms <ms>', env: 'TIMELANE_LOAD_INTERVAL_MS', description: 'how often the loader extends the window', default: 1000 },
  { key: 'repairIntervalMs', flag: '--repair-interval-ms <ms>', env: 'TIMELANE_REPAIR_INTERVAL_MS', description: 'how often the repair scan re-reads the loaded window (also runs after LISTEN reconnects and shard acquisitions), and the workflow repair pass runs', default: 30_000 },
  { key: 'reapIntervalMs', flag: '--reap-interval-ms <ms>', env: 'TIMELANE_REAP_INTERVAL_MS', description: 'how often expired delivery leases are redelivered', default: 1000 },
  { key: 'defaultRunLeaseMs', flag: '--default-run-lease-ms <ms>', env: 'TIMELANE_DEFAULT_RUN_LEASE_MS', description: 'delivery lease of a fired run when the job sets none', default: 30_000 },
  { key: 'maxPayloadBytes', flag: '--max-payload-bytes <n>', env: 'TIMELANE_MAX_PAYLOAD_BYTES', description: 'largest accepted payload', default: 262_144 },
  { key: 'migrateOnStart', flag: '--migrate-on-start', env: 'TIMELANE_MIGRATE_ON_START', description: 'apply migrations at start (dev); production runs `timelane migrate`', default: false },
  { key: 'stopTimeoutMs', flag: '--stop-timeout-ms <ms>', env: 'TIMELANE_STOP_TIMEOUT_MS', description: 'on SIGTERM/SIGINT, the graceful stop (hand shards over, drain, close connections) gets this long; past it, or on a second signal, the daemon exits at once (code 1), which is as safe as a crash: leases expire, unanswered at-least-once runs are redelivered. 0 = wait for ever', default: 20_000 },
  { key: 'jitInterruptBudget', flag: '--jit-interrupt-budget <n>', env: 'TIMELANE_JIT_INTERRUPT_BUDGET', description: "how soon V8 optimises a hot function (its --interrupt-budget; V8's default is 67,584). 2000: a daemon started cold into 10,000 runs/s is at full speed within its first second, but compiles in bursts that lengthen the tail at low rates (bench/README.md). 0 = V8's default", default: 0 },
  { key: 'warmUpRuns', flag: '--warm-up-runs <n>', env: 'TIMELANE_WARM_UP_RUNS', description: 'before taking shards, run this many synthetic runs through the per-run code of the fire path (no row written; at most 3 s), so that a burst at start is not fired by cold code (bench/README.md). 0 = none', default: 20_000 },
  { key: 'logLevel', flag: '--log-level <level>', env: 'TIMELANE_LOG_LEVEL', description: 'fatal|error|warn|info|debug|trace|silent', default: 'info' },
  { key: 'logFormat', flag: '--log-format <format>', env: 'TIMELANE_LOG_FORMAT', description: 'json (one object per line) or pretty (human-readable; `timelane dev` defaults to it)', default: 'json' },
  { key: 'otlpTracesEndpoint', flag: '--otlp-traces-endpoint <url>', env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', description: 'export traces (OpenTelemetry, OTLP/HTTP JSON) to this URL, e.g. http://collector:4318/v1/traces; OTEL_EXPORTER_OTLP_ENDPOINT also turns them on (+ /v1/traces); unset => no tracing SDK is loaded', default: '' },
  { key: 'tlsCert', flag: '--tls-cert <file>', env: 'TIMELANE_TLS_CERT', description: 'PEM certificate of the gRPC and metrics listeners (with --tls-key); unset => plaintext', default: '' },
  { key: 'tlsKey', flag: '--tls-key <file>', env: 'TIMELANE_TLS_KEY', description: 'PEM private key of --tls-cert', default: '' },
  { key: 'tlsClientCa', flag: '--tls-client-ca <file>', env: 'TIMELANE_TLS_CLIENT_CA', description: 'PEM CA: gRPC clients must present a certificate it signed (mTLS)', default: '' },
  { key: 'tlsReloadMs', flag: '--tls-reload-ms <ms>', env: 'TIMELANE_TLS_RELOAD_MS', description: 'how often certificate and credentials files are re-read (renewals need no restart)', default: 60_000 },
  { key: 'authFile', flag: '--auth-file <file>', env: 'TIMELANE_AUTH_FILE', description: 'credentials file: SHA-256 of bearer tokens and certificate subjects, each with a role and a namespace', default: '' },
  { key: 'quotasFile', flag: '--quotas-file <file>', env: 'TIMELANE_QUOTAS_FILE', description: 'per-namespace quotas (max_payload_bytes, schedules_per_second, max_scheduled_runs), re-read on change', default: '' },
  { key: 'insecure', flag: '--insecure', env: 'TIMELANE_INSECURE', description: 'run with no authentication (a production daemon refuses to start open without it)', default: false },
];

const NUMERIC_LIMITS: Partial<Record<keyof DaemonConfig, [number, number]>> = {
  databasePoolSize: [2, 500],
  databaseStatementTimeoutMs: [0, 3_600_000],
  stopTimeoutMs: [0, 3_600_000],
  jitInterruptBudget: [0, 10_000_000],
  warmUpRuns: [0, 1_000_000],
  shardCount: [1, 65_536],
  leaseTtlMs: [500, 120_000],
  windowMs: [1_000, 3_600_000],
  materialiseAheadMs: [0, 3_600_000],
  maxInWindow: [1_000, 50_000_000],
  loadIntervalMs: [50, 60_000],
  claimAheadMs: [0, 1_000],
  repairIntervalMs: [100, 600_000],
  reapIntervalMs: [50, 60_000],
  membershipIntervalMs: [100, 60_000],
  defaultRunLeaseMs: [1_000, 3_600_000],
  tlsReloadMs: [100, 86_400_000],
  maxPayloadBytes: [1_024, 16_777_216],
};

/** Builds a config from defaults, then `env`, then `flags` (already parsed, keyed by option key). */
export function resolveConfig(flags: Partial<Record<keyof DaemonConfig, unknown>>, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const out: Record<string, unknown> = {};
  for (const spec of OPTION_SPECS) {
    let raw: unknown = spec.default;
    // Secrets from files: X_FILE holds the path of X's value (Kubernetes Secrets, systemd credentials).
    const fileVar = env[`${spec.env}_FILE`];
    if (fileVar) raw = readSettingFile(`${spec.env}_FILE`, fileVar);
    if (env[spec.env] !== undefined && env[spec.env] !== '') raw = env[spec.env];
    if (flags[spec.key] !== undefined) raw = flags[spec.key];
    out[spec.key] = coerce(spec, raw);
  }
  const cfg = out as unknown as DaemonConfig;
  if (!cfg.advertiseAddress) cfg.advertiseAddress = cfg.grpcAddress;
  validateConfig(cfg);
  return cfg;
}

function readSettingFile(name: string, file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function coerce(spec: OptionSpec, raw: unknown): string | number | boolean {
  const envName = `${spec.flag.split(' ')[0]} / ${spec.env}`;
  if (typeof spec.default === 'number') {
    const n = typeof raw === 'number' ? raw : Number(String(raw).replace(/_/g, ''));
    if (!Number.isInteger(n)) throw new Error(`${envName}: must be an integer (got "${String(raw)}")`);
    return n;
  }
  if (typeof spec.default === 'boolean') {
    if (typeof raw === 'boolean') return raw;
    const s = String(raw).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
    throw new Error(`${envName}: must be true or false (got "${String(raw)}")`);
  }
  return String(raw);
}

export function validateConfig(cfg: DaemonConfig): void {
  for (const [key, [lo, hi]] of Object.entries(NUMERIC_LIMITS) as [keyof DaemonConfig, [number, number]][]) {
    const v = cfg[key] as number;
    if (v < lo || v > hi) throw new Error(`${flagOf(key)}: must be between ${lo} and ${hi} (got ${v})`);
  }
  if (cfg.logFormat !== 'json' && cfg.logFormat !== 'pretty') throw new Error(`--log-format: must be json or pretty (got "${cfg.logFormat}")`);
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(cfg.memberId)) throw new Error(`--member-id: 1..64 chars of [A-Za-z0-9_.-] (got "${cfg.memberId}")`);
  if (!/^[^:]+:\d+$|^\[[^\]]+\]:\d+$/.test(cfg.grpcAddress)) throw new Error(`--grpc-address: must be host:port (got "${cfg.grpcAddress}")`);
  if (cfg.healthAddress && !/^[^:]+:\d+$/.test(cfg.healthAddress)) throw new Error(`--health-address: must be host:port or "" (got "${cfg.healthAddress}")`);
  if (cfg.metricsAddress && !/^[^:]+:\d+$/.test(cfg.metricsAddress)) throw new Error(`--metrics-address: must be host:port or "" (got "${cfg.metricsAddress}")`);
  if (cfg.consoleAddress && !/^[^:]+:\d+$/.test(cfg.consoleAddress)) throw new Error(`--console-address: must be host:port or "" (got "${cfg.consoleAddress}")`);
  if (cfg.otlpTracesEndpoint && !/^https?:\/\/[^/\s]+/.test(cfg.otlpTracesEndpoint))
    throw new Error(`--otlp-traces-endpoint: must be an http:// or https:// URL (got "${cfg.otlpTracesEndpoint}")`);
  if (cfg.reapIntervalMs > cfg.defaultRunLeaseMs) throw new Error('--reap-interval-ms: must not exceed --default-run-lease-ms');
  if (!cfg.redisTlsCert !== !cfg.redisTlsKey) throw new Error('--redis-tls-cert / --redis-tls-key: give both, or neither');
  if (!cfg.tlsCert !== !cfg.tlsKey) throw new Error('--tls-cert / --tls-key: give both, or neither');
  if (cfg.tlsClientCa && !cfg.tlsCert) throw new Error('--tls-client-ca: needs --tls-cert and --tls-key (mTLS is TLS with client certificates)');
  if (cfg.insecure && (cfg.authFile || cfg.tlsClientCa)) throw new Error('--insecure: contradicts --auth-file / --tls-client-ca (drop one)');
  if (cfg.materialiseAheadMs !== 0 && cfg.materialiseAheadMs < cfg.windowMs) throw new Error('--materialise-ahead-ms: must be 0 (the window) or at least --window-ms');
  if (cfg.loadIntervalMs * 2 > cfg.windowMs) throw new Error('--load-interval-ms: must be at most half of --window-ms');
}

export function flagOf(key: keyof DaemonConfig): string {
  return OPTION_SPECS.find((s) => s.key === key)?.flag.split(' ')[0] ?? key;
}

/** Parses "0-63,128,130-131" into sorted shard numbers below `shardCount`. */
export function parseShardRanges(spec: string, shardCount: number): number[] {
  const out = new Set<number>();
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`--shards: "${part}" is not N or N-M`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) throw new Error(`--shards: range "${part}" is reversed`);
    if (hi >= shardCount) throw new Error(`--shards: ${hi} is outside 0..${shardCount - 1}`);
    for (let s = lo; s <= hi; s++) out.add(s);
  }
  return [...out].sort((a, b) => a - b);
}
