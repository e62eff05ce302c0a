#!/usr/bin/env node
/**
 * The `timelane` command. Server commands (daemon, dev, migrate) come from
 * daemon/commands.ts; the client commands live in clients/cli-*.ts.
 */
import { Command } from 'commander';
import { registerDaemonCommands } from '../daemon/commands.js';
import { registerClientCommands } from './cli-commands.js';
import { registerWorkerCommand } from './cli-worker.js';

const program = new Command('timelane')
  .description('durable timer daemon with a gRPC API: schedule runs, work them, inspect the cluster')
  .showHelpAfterError('(run with --help for usage)');

registerDaemonCommands(program);
registerClientCommands(program);
registerWorkerCommand(program);

await program.parseAsync(process.argv);
