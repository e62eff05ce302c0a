import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerOpsCommands, type OpsActions } from '../../clients/cli/cli-ops.js';
import { candidateOrder, memberAddresses, planStreams, splitHostPort } from '../../clients/typescript/src/discovery.js';
import {
  isMoving,
  membersTable,
  mergeShardViews,
  moveLine,
  moveSummary,
  movesTable,
  ownerCounts,
  perMemberLines,
  shardsSummary,
  shardsTable,
} from '../../clients/cli/ops-format.js';
import type { MemberInfo, ShardInfo } from '@timelane/client';

function shard(n: number, over: Partial<ShardInfo> = {}): ShardInfo {
  return {
    shard: n,
    owner: 'a',
    fence: 1,
    runsInWindow: 0,
    nextDueAtMs: 0,
    acquiredAtMs: 1_000,
    ownedHere: false,
    leaseAgeMs: 1_500,
    lagMs: 0,
    assignedTo: 'a',
    ...over,
  };
}

function member(id: string, grpcAddress: string): MemberInfo {
  return { id, grpcAddress, ownedShards: 0, startedAtMs: 0, lastSeenMs: 0 };
}

type Call = [keyof OpsActions, ...unknown[]];

/** Parses argv with recording actions; returns the calls (or throws the CommanderError). */
async function parse(...args: string[]): Promise<Call[]> {
  const calls: Call[] = [];
  const actions: OpsActions = {
    shards: async (o) => void calls.push(['shards', o]),
    members: async (o) => void calls.push(['members', o]),
    move: async (o) => void calls.push(['move', o]),
    drain: async (m, o) => void calls.push(['drain', m, o]),
    rebalance: async (o) => void calls.push(['rebalance', o]),
  };
  const program = new Command('timelane').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerOpsCommands(program, actions);
  await program.parseAsync(args, { from: 'user' });
  return calls;
}

async function parseError(...args: string[]): Promise<string> {
  try {
    await parse(...args);
  } catch (err) {
    if (err instanceof CommanderError) return err.code;
    throw err;
  }
  throw new Error('expected a parse error');
}

describe('ops argument parsing', () => {
  it('move: shard, target and timeout', async () => {
    const [[name, o]] = await parse('ops', 'move', '--shard', '5', '--to', 'b', '--timeout-ms', '2000', '--address', 'h:1', '--json');
    expect(name).toBe('move');
    expect(o).toMatchObject({ shard: 5, to: 'b', timeoutMs: 2000, address: 'h:1', json: true });
  });

  it('move: rejects a negative or non-numeric shard and a missing target', async () => {
    expect(await parseError('ops', 'move', '--shard', '-1', '--to', 'b')).toBe('commander.invalidArgument');
    expect(await parseError('ops', 'move', '--shard', 'x', '--to', 'b')).toBe('commander.invalidArgument');
    expect(await parseError('ops', 'move', '--shard', '1.5', '--to', 'b')).toBe('commander.invalidArgument');
    expect(await parseError('ops', 'move', '--shard', '3')).toBe('commander.missingMandatoryOptionValue');
  });

  it('drain: member argument, --undo', async () => {
    expect(await parse('ops', 'drain', 'b')).toEqual([['drain', 'b', expect.not.objectContaining({ undo: true })]]);
    const [[, m, o]] = await parse('ops', 'drain', 'b', '--undo', '--timeout-ms', '500');
    expect(m).toBe('b');
    expect(o).toMatchObject({ undo: true, timeoutMs: 500 });
    expect(await parseError('ops', 'drain')).toBe('commander.missingArgument');
  });

  it('rebalance: --dry-run', async () => {
    const [[, o]] = await parse('ops', 'rebalance', '--dry-run');
    expect(o).toMatchObject({ dryRun: true });
    const [[, plain]] = await parse('ops', 'rebalance');
    expect((plain as { dryRun?: boolean }).dryRun).toBeUndefined();
  });

  it('shards: fans out unless --no-fanout; top-level aliases', async () => {
    expect((await parse('ops', 'shards'))[0][1]).toMatchObject({ fanout: true });
    expect((await parse('ops', 'shards', '--no-fanout', '--json'))[0][1]).toMatchObject({ fanout: false, json: true });
    expect((await parse('shards'))[0][0]).toBe('shards');
    expect((await parse('members', '--address', 'x:2'))[0]).toEqual(['members', expect.objectContaining({ address: 'x:2' })]);
    expect((await parse('ops', 'members'))[0][0]).toBe('members');
  });
});

describe('mergeShardViews', () => {
  it('takes runs in window from each shard owner and marks unknown ones', () => {
    const primary = [
      shard(0, { owner: 'a', ownedHere: true, runsInWindow: 4 }),
      shard(1, { owner: 'b', runsInWindow: 0 }),
      shard(2, { owner: 'c', runsInWindow: 0 }),
      shard(3, { owner: '', runsInWindow: 0, assignedTo: 'b' }),
    ];
    const fromB = [shard(0, { owner: 'a' }), shard(1, { owner: 'b', ownedHere: true, runsInWindow: 7 })];
    const merged = mergeShardViews(primary, [fromB, null]);
    expect(merged.map((s) => s.runsInWindow)).toEqual([4, 7, null, 0]);
    expect(merged[1].owner).toBe('b');
  });
});

describe('ops formatting', () => {
  const shards = mergeShardViews(
    [
      shard(0, { owner: 'a', ownedHere: true, runsInWindow: 2, lagMs: 12.5, nextDueAtMs: Date.UTC(2030, 0, 1) }),
      shard(1, { owner: 'b', assignedTo: 'a' }),
      shard(2, { owner: '', assignedTo: 'b', leaseAgeMs: 0 }),
    ],
    [],
  );

  it('shardsTable shows unknown counts, lag and moving shards', () => {
    const lines = shardsTable(shards).split('\n');
    expect(lines[0]).toMatch(/^SHARD\s+OWNER\s+ASSIGNED\s+FENCE\s+LEASE AGE\s+IN WINDOW\s+NEXT DUE\s+LAG$/);
    expect(lines[1]).toMatch(/^0\s+a\s+a\s+1\s+1\.5s\s+2\s+2030-01-01T00:00:00\.000Z\s+12\.5ms$/);
    expect(lines[2]).toMatch(/^1\s+b\s+a\s+1\s+1\.5s\s+\?\s+-\s+-\s+moving$/);
    expect(lines[3]).toMatch(/^2\s+-\s+b\s+1\s+-\s+0\s+-\s+-\s+unowned$/);
  });

  it('summary counts owners, unowned and moving shards', () => {
    expect(shardsSummary(shards)).toBe('3 shards: a 1, b 1, unowned 1; moving 2; max lag 12.5ms');
    expect(ownerCounts([{ owner: '' }, { owner: 'b' }, { owner: 'a' }, { owner: 'b' }])).toEqual([
      ['a', 1],
      ['b', 2],
      ['', 1],
    ]);
    expect(isMoving({ owner: 'a', assignedTo: '' })).toBe(false);
  });

  it('moves, per-member counts and members', () => {
    const moves = [
      { shard: 9, fromMember: 'b', toMember: 'a' },
      { shard: 3, fromMember: '', toMember: 'a' },
      { shard: 4, fromMember: 'b', toMember: 'a' },
    ];
    expect(movesTable(moves).split('\n')).toEqual(['SHARD  FROM  TO', '3      -     a', '4      b     a', '9      b     a']);
    expect(movesTable([])).toBe('no moves');
    expect(moveSummary(moves)).toBe('b -> a: 2, - -> a: 1');
    expect(moveLine(moves[0], 12.34)).toBe('shard 9: b -> a (handoff 12.3ms)');
    expect(moveLine({ shard: 1, fromMember: 'a', toMember: '' })).toBe('shard 1: a -> -');
    expect(perMemberLines({ b: 21, a: 22 }).split('\n')).toEqual(['MEMBER  SHARDS', 'a       22', 'b       21']);
    expect(perMemberLines({})).toBe('(no members)');
    const now = 100_000;
    const table = membersTable([{ id: 'a', grpcAddress: '10.0.0.1:7070', ownedShards: 22, startedAtMs: now - 90_000, lastSeenMs: now - 400 }], now);
    expect(table.split('\n')[1]).toMatch(/^a\s+10\.0\.0\.1:7070\s+22\s+1m30s\s+400ms ago$/);
  });
});

describe('discovery helpers', () => {
  it('splitHostPort', () => {
    expect(splitHostPort('10.0.0.1:7070')).toEqual({ host: '10.0.0.1', port: '7070' });
    expect(splitHostPort('[::1]:7070')).toEqual({ host: '[::1]', port: '7070' });
    expect(splitHostPort('timelane-0.timelane:7070')).toEqual({ host: 'timelane-0.timelane', port: '7070' });
    expect(splitHostPort('::1')).toBeNull();
    expect(splitHostPort('host')).toBeNull();
  });

  it('memberAddresses: dedupes, sorts, skips empty, maps wildcard hosts to the answering host', () => {
    const members = [member('b', '10.0.0.2:7070'), member('a', '10.0.0.1:7070'), member('c', ''), member('d', '10.0.0.1:7070')];
    expect(memberAddresses(members, 'seed:7070')).toEqual(['10.0.0.1:7070', '10.0.0.2:7070']);
    expect(memberAddresses([member('x', '0.0.0.0:7071'), member('y', '[::]:7072')], 'localhost:7070')).toEqual([
      'localhost:7071',
      'localhost:7072',
    ]);
    expect(memberAddresses([member('x', '0.0.0.0:7071')], '0.0.0.0:7070')).toEqual(['0.0.0.0:7071']);
  });

  it('planStreams opens new and closes gone addresses', () => {
    expect(planStreams(['a:1', 'b:1'], ['b:1', 'c:1'])).toEqual({ open: ['c:1'], close: ['a:1'] });
    expect(planStreams([], ['a:1'])).toEqual({ open: ['a:1'], close: [] });
    expect(planStreams(['a:1'], ['a:1'])).toEqual({ open: [], close: [] });
  });

  it('candidateOrder: last answer, seeds, known members, no repeats', () => {
    expect(candidateOrder('b:1', ['s:1', 'b:1'], ['a:1', 'b:1', 's:1'])).toEqual(['b:1', 's:1', 'a:1']);
    expect(candidateOrder(undefined, ['s:1'], [])).toEqual(['s:1']);
  });
});
