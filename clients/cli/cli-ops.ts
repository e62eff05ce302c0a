/**
 * `timelane ops …`: the operator's view of a cluster and its moves.
 *
 *   ops shards     owner, assignment, fence, lease age, runs in window, lag
 *   ops members    live members
 *   ops move       move one shard to a member (graceful handoff)
 *   ops drain      move every shard off a member (--undo takes it back)
 *   ops rebalance  drop operator moves; the balanced assignment applies again
 *
 * Exit codes: 0 done, 1 error, 3 the moves were accepted but had not all
 * landed within --timeout-ms (they keep going; watch `ops shards`). Drain
 * and rebalance start their moves (the daemon waits at most START_WAIT_MS),
 * then watch them land through ListShards, showing progress on stderr. The
 * top-level `shards` and `members` are aliases.
 *
 * The actions are injectable (`OpsActions`) so argument parsing can be
 * tested without a daemon.
 */
import { connectionFromEnv } from '@timelane/client';
import { Command } from 'commander';
import { TimelaneClient } from '@timelane/client';
import { type ConnectionOptions, connectionOptions, nonNegativeIntArg, out, withClient } from './cli-common.js';
import { memberAddresses } from '@timelane/client';
import { errorLine, toJson } from './format.js';
import {
  membersTable,
  mergeShardViews,
  moveLine,
  moveSummary,
  movesTable,
  perMemberLines,
  shardsSummary,
  shardsTable,
} from './ops-format.js';
import type { ShardInfo, ShardMoveInfo } from '@timelane/client';
import { progress, type Progress } from './cli-progress.js';

export interface ShardsOptions extends ConnectionOptions {
  /** false with --no-fanout: ask only --address. */
  fanout: boolean;
}

export interface MoveOptions extends ConnectionOptions {
  shard: number;
  to: string;
  timeoutMs?: number;
}

export interface DrainOptions extends ConnectionOptions {
  undo?: boolean;
  timeoutMs?: number;
}

export interface RebalanceOptions extends ConnectionOptions {
  dryRun?: boolean;
  timeoutMs?: number;
}

export interface OpsActions {
  shards(opts: ShardsOptions): Promise<void>;
  members(opts: ConnectionOptions): Promise<void>;
  move(opts: MoveOptions): Promise<void>;
  drain(member: string, opts: DrainOptions): Promise<void>;
  rebalance(opts: RebalanceOptions): Promise<void>;
}

/** Exit code when moves were accepted but not all had landed at the timeout. */
export const EXIT_INCOMPLETE = 3;

export function registerOpsCommands(program: Command, actions: OpsActions = defaultOpsActions): void {
  const ops = program
    .command('ops')
    .description('operate a cluster: shards, members, move, drain, rebalance')
    .addHelpText(
      'after',
      '\nDrain and rebalance show their progress on stderr (a bar in a terminal, lines otherwise).\nExit codes: 0 done, 1 error, 3 moves accepted but not all landed before the timeout (they continue).',
    );

  shardsCommand(ops.command('shards'), actions);
  membersCommand(ops.command('members'), actions);

  connectionOptions(ops.command('move'))
    .description('move one shard to a live member and wait for the handoff')
    .requiredOption('--shard <n>', 'shard number (0..shard count-1)', nonNegativeIntArg)
    .requiredOption('--to <member>', 'member id that takes the shard')
    .option('--timeout-ms <ms>', 'how long the daemon waits for the new owner (default 10000)', nonNegativeIntArg)
    .action((opts: MoveOptions) => actions.move(opts));

  connectionOptions(ops.command('drain <member>'))
    .description('move every shard off a member (before taking it down); --undo takes it back')
    .option('--undo', 'take the member back into the assignment')
    .option('--timeout-ms <ms>', 'how long to watch the moves land, showing progress (default 15000)', nonNegativeIntArg)
    .action((member: string, opts: DrainOptions) => actions.drain(member, opts));

  connectionOptions(ops.command('rebalance'))
    .description('drop operator moves so the balanced assignment applies again (prints the plan)')
    .option('--dry-run', 'only print the planned moves')
    .option('--timeout-ms <ms>', 'how long to watch the moves land, showing progress (default 15000)', nonNegativeIntArg)
    .action((opts: RebalanceOptions) => actions.rebalance(opts));

  // Top-level aliases kept from before `ops` existed.
  shardsCommand(program.command('shards'), actions, ' (alias of `ops shards`)');
  membersCommand(program.command('members'), actions, ' (alias of `ops members`)');
}

function shardsCommand(cmd: Command, actions: OpsActions, suffix = ''): Command {
  return connectionOptions(cmd)
    .description(`list shards: owner, assignment, fence, lease age, runs in window, next due, lag${suffix}`)
    .option('--no-fanout', 'ask only --address (runs in window then only for its own shards)')
    .action((opts: ShardsOptions) => actions.shards(opts));
}

function membersCommand(cmd: Command, actions: OpsActions, suffix = ''): Command {
  return connectionOptions(cmd)
    .description(`list the live cluster members${suffix}`)
    .action((opts: ConnectionOptions) => actions.members(opts));
}

/** Lists shards from `client`; with fanout, asks every member for its own shards' runs in window. */
export async function collectShards(
  client: TimelaneClient,
  fanout: boolean,
  warn: (line: string) => void,
): Promise<ReturnType<typeof mergeShardViews>> {
  if (!fanout) return mergeShardViews(await client.listShards(), []);
  const [primary, members] = await Promise.all([client.listShards(), client.listMembers().catch(() => [])]);
  const addresses = memberAddresses(members, client.address).filter((a) => a !== client.address);
  const others = await Promise.all(
    addresses.map(async (address): Promise<ShardInfo[] | null> => {
      const c = new TimelaneClient(address, { ...connectionFromEnv(), timeoutMs: 5_000 });
      try {
        return await c.listShards();
      } catch (err) {
        warn(`warning: ${address}: ${errorLine(err).replace(/^error: /, '')} (runs in window unknown for its shards)`);
        return null;
      } finally {
        c.close();
      }
    }),
  );
  return mergeShardViews(primary, others);
}

function incomplete(what: string): void {
  process.stderr.write(`${what}: not every move had landed within the timeout; they continue (watch \`timelane ops shards\`)\n`);
  process.exitCode = EXIT_INCOMPLETE;
}

/** What the daemon waits for a drain or rebalance before answering with its plan (its minimum). */
const START_WAIT_MS = 100;
const DEFAULT_MOVES_TIMEOUT_MS = 15_000;
const WATCH_EVERY_MS = 250;

/** Watches moves land (their shard owned by their target in Postgres) until all have or `timeoutMs` passes. */
export async function watchMoves(client: TimelaneClient, moves: readonly ShardMoveInfo[], timeoutMs: number, bar: Progress): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      // The moves were accepted: a failed look (a member restarting) is tried again, not an error.
      const shards = await client.listShards().catch(() => null);
      if (shards) {
        const owners = new Map(shards.map((s) => [s.shard, s.owner]));
        const pending = moves.filter((m) => owners.get(m.shard) !== m.toMember);
        const waiting = pending.slice(0, 8).map((m) => m.shard).join(',') + (pending.length > 8 ? ',…' : '');
        bar.update(moves.length - pending.length, moves.length, pending.length ? `moves landed; waiting for shard${pending.length === 1 ? '' : 's'} ${waiting}` : 'moves landed');
        if (pending.length === 0) return true;
      }
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, WATCH_EVERY_MS));
    }
  } finally {
    bar.stop();
  }
}

export const defaultOpsActions: OpsActions = {
  shards: (opts) =>
    withClient(opts, async (client) => {
      const shards = await collectShards(client, opts.fanout, (line) => process.stderr.write(`${line}\n`));
      if (opts.json) return out(toJson(shards));
      out(shardsTable(shards));
      out('');
      out(shardsSummary(shards));
    }),

  members: (opts) =>
    withClient(opts, async (client) => {
      const members = await client.listMembers();
      if (opts.json) return out(toJson(members));
      out(membersTable(members));
    }),

  move: (opts) =>
    withClient(opts, async (client) => {
      const res = await client.moveShard(opts.shard, opts.to, { timeoutMs: opts.timeoutMs });
      if (opts.json) return out(toJson(res));
      out(moveLine(res.move, res.handoffMs));
    }),

  drain: (member, opts) =>
    withClient(opts, async (client) => {
      const verb = opts.undo ? 'undrain' : 'drain';
      const started = await client.drainMember(member, { undo: opts.undo, timeoutMs: START_WAIT_MS });
      const completed = await watchMoves(client, started.moves, opts.timeoutMs || DEFAULT_MOVES_TIMEOUT_MS, progress(`${verb} ${member}`, { quiet: opts.json }));
      const res = { ...started, completed };
      if (opts.json) out(toJson(res));
      else {
        out(`${verb} ${member}: ${res.moves.length} move${res.moves.length === 1 ? '' : 's'}${res.moves.length ? ` (${moveSummary(res.moves)})` : ''}`);
        if (res.moves.length) out(movesTable(res.moves));
        out(res.completed ? 'completed' : 'NOT completed within the timeout');
      }
      if (!res.completed) incomplete(`${opts.undo ? 'undrain' : 'drain'} ${member}`);
    }),

  rebalance: (opts) =>
    withClient(opts, async (client) => {
      const started = await client.rebalance({ dryRun: opts.dryRun, timeoutMs: START_WAIT_MS });
      const completed =
        started.executed && (await watchMoves(client, started.moves, opts.timeoutMs || DEFAULT_MOVES_TIMEOUT_MS, progress('rebalance', { quiet: opts.json })));
      const res = { ...started, completed };
      if (opts.json) out(toJson(res));
      else {
        out(`plan: ${res.moves.length} move${res.moves.length === 1 ? '' : 's'}${res.moves.length ? ` (${moveSummary(res.moves)})` : ' (already balanced)'}`);
        if (res.moves.length) out(movesTable(res.moves));
        out('');
        out('shards per member after the plan:');
        out(perMemberLines(res.shardsPerMember));
        out('');
        if (!res.executed) out('dry run: nothing changed');
        else out(res.completed ? 'executed: completed' : 'executed: NOT completed within the timeout');
      }
      if (res.executed && !res.completed) incomplete('rebalance');
    }),
};
