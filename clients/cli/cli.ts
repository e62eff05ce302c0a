#!/usr/bin/env node
/**
 * The `timelane` command. Server commands (daemon, dev, migrate) come from
 * daemon/commands.ts; the client commands live in clients/cli/cli-*.ts and
 * use the client library, @timelane/client, like any application.
 */
import { Command } from 'commander';
import { registerDaemonCommands } from '../../daemon/commands.js';
import { registerClientCommands } from './cli-commands.js';
import { registerJobCommands } from './cli-jobs.js';
import { registerDeadLetterCommands } from './cli-dead.js';
import { registerOpsCommands } from './cli-ops.js';
import { registerWorkerCommand } from './cli-worker.js';
import { registerWorkflowCommands } from './cli-workflow.js';

// `timelane ops shards | head`: a closed pipe ends the command quietly.
// grpc-js sends the target as TLS server name even when it is an IP address
// (`--address 127.0.0.1:7070`), and Node warns about it on every command:
// noise for a person at a terminal, not something they can act on. (The
// server commands keep Node's warnings: an operator reads their logs.)
if (!['daemon', 'dev', 'migrate'].includes(process.argv[2] ?? '')) process.noDeprecation = true;

process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('timelane')
  .description('durable timer daemon with a gRPC API: schedule runs, work them, inspect the cluster')
  .showHelpAfterError('(run with --help for usage)');

registerDaemonCommands(program);
registerClientCommands(program);
registerJobCommands(program);
registerDeadLetterCommands(program);
registerWorkerCommand(program);
registerWorkflowCommands(program);
registerOpsCommands(program);

await program.parseAsync(process.argv);
