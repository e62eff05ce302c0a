import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { flagOf, OPTION_SPECS, parseShardRanges, resolveConfig, type DaemonConfig } from '../../daemon/config.js';

const none: NodeJS.ProcessEnv = {};

describe('resolveConfig', () => {
  it('defaults: every option takes its documented default', () => {
    const cfg = resolveConfig({}, none);
    for (const spec of OPTION_SPECS) {
      if (spec.key === 'advertiseAddress') continue;
      expect(cfg[spec.key], spec.key).toBe(spec.default);
    }
    expect(cfg).toMatchObject({
      databaseSchema: 'timelane',
      redisUrl: '',
      windowMs: 30_000,
      maxInWindow: 1_000_000,
      leaseTtlMs: 3_000,
      adoptOrphans: false,
      migrateOnStart: false,
      memberId: `${os.hostname()}-${process.pid}`,
    });
    // Unset advertise address falls back to the gRPC address.
    expect(cfg.advertiseAddress).toBe(cfg.grpcAddress);
  });

  it('environment overrides defaults; numbers may use _ separators; booleans accept yes/no/1/0/on/off', () => {
    const cfg = resolveConfig(
      {},
      {
        DATABASE_URL: 'postgres://u@h/db',
        REDIS_URL: 'redis://r:6379',
        TIMELANE_WINDOW_MS: '5000',
        TIMELANE_MAX_IN_WINDOW: '2_000',
        TIMELANE_ADOPT_ORPHANS: 'YES',
        TIMELANE_MIGRATE_ON_START: '1',
        TIMELANE_SHARDS: '0-3',
        TIMELANE_ADVERTISE_ADDRESS: 'node-1:7070',
      },
    );
    expect(cfg).toMatchObject({
      databaseUrl: 'postgres://u@h/db',
      redisUrl: 'redis://r:6379',
      windowMs: 5_000,
      maxInWindow: 2_000,
      adoptOrphans: true,
      migrateOnStart: true,
      shards: '0-3',
      advertiseAddress: 'node-1:7070',
    });
    expect(resolveConfig({}, { TIMELANE_ADOPT_ORPHANS: 'off' }).adoptOrphans).toBe(false);
  });

  it('an empty environment variable counts as unset', () => {
    expect(resolveConfig({}, { TIMELANE_WINDOW_MS: '', TIMELANE_DATABASE_SCHEMA: '' })).toMatchObject({ windowMs: 30_000, databaseSchema: 'timelane' });
  });

  it('flags override the environment (typed values or the strings a CLI parser hands over)', () => {
    const env = { TIMELANE_WINDOW_MS: '5000', TIMELANE_ADOPT_ORPHANS: 'true', TIMELANE_MEMBER_ID: 'from-env' };
    const cfg = resolveConfig({ windowMs: 6_000, adoptOrphans: false, memberId: 'from-flag' }, env);
    expect(cfg).toMatchObject({ windowMs: 6_000, adoptOrphans: false, memberId: 'from-flag' });
    expect(resolveConfig({ windowMs: '7000' }, env).windowMs).toBe(7_000);
    expect(resolveConfig({}, env)).toMatchObject({ windowMs: 5_000, adoptOrphans: true, memberId: 'from-env' });
  });

  describe('bad values are refused with a message naming the flag', () => {
    const cases: Array<[string, Partial<Record<keyof DaemonConfig, unknown>>, NodeJS.ProcessEnv, RegExp]> = [
      ['not a number (env)', {}, { TIMELANE_WINDOW_MS: 'abc' }, /--window-ms.*TIMELANE_WINDOW_MS.*integer.*"abc"/],
      ['not an integer (flag)', { leaseTtlMs: '1.5' }, none, /--lease-ttl-ms.*integer/],
      ['below the range', { windowMs: 10 }, none, /--window-ms: must be between 1000 and 3600000 \(got 10\)/],
      ['above the range', {}, { TIMELANE_DATABASE_POOL_SIZE: '100000' }, /--database-pool-size: must be between 2 and 500/],
      ['max in window too small', { maxInWindow: 5 }, none, /--max-in-window: must be between/],
      ['not a boolean', {}, { TIMELANE_ADOPT_ORPHANS: 'maybe' }, /--adopt-orphans.*true or false.*"maybe"/],
      ['bad member id', { memberId: 'has space!' }, none, /--member-id/],
      ['bad grpc address', { grpcAddress: 'no-port' }, none, /--grpc-address: must be host:port/],
      ['bad metrics address', { metricsAddress: 'x' }, none, /--metrics-address/],
      ['materialise lead shorter than the window', { windowMs: 30_000, materialiseAheadMs: 10_000 }, none, /--materialise-ahead-ms: must be 0 \(the window\) or at least --window-ms/],
      ['load interval above half the window', { windowMs: 10_000, loadIntervalMs: 6_000 }, none, /--load-interval-ms/],
      ['reap interval above the run lease', { reapIntervalMs: 5_000, defaultRunLeaseMs: 2_000 }, none, /--reap-interval-ms/],
    ];
    it.each(cases)('%s', (_name, flags, env, message) => {
      expect(() => resolveConfig(flags, env)).toThrow(message);
    });
  });

  it('accepts the edges of each range, an IPv6 gRPC address, and "" to disable metrics', () => {
    const cfg = resolveConfig({ windowMs: 1_000, loadIntervalMs: 500, metricsAddress: '', grpcAddress: '[::1]:7070' }, none);
    expect(cfg).toMatchObject({ windowMs: 1_000, loadIntervalMs: 500, metricsAddress: '', grpcAddress: '[::1]:7070' });
  });

  it('documents every option once, with a flag, an env name and a description', () => {
    const keys = OPTION_SPECS.map((s) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(OPTION_SPECS.map((s) => s.env)).size).toBe(keys.length);
    for (const s of OPTION_SPECS) {
      expect(s.flag).toMatch(/^--[a-z-]+/);
      expect(s.description.length).toBeGreaterThan(5);
      expect(flagOf(s.key)).toBe(s.flag.split(' ')[0]);
    }
  });
});

describe('parseShardRanges', () => {
  it('parses single shards and ranges, sorted and without duplicates', () => {
    expect(parseShardRanges('0-3,5', 8)).toEqual([0, 1, 2, 3, 5]);
    expect(parseShardRanges(' 6 , 2-3 ,3, 0 ', 8)).toEqual([0, 2, 3, 6]);
    expect(parseShardRanges('7', 8)).toEqual([7]);
    expect(parseShardRanges('0-63,128,130-131', 256)).toHaveLength(67);
  });

  it('empty means no pinned shards', () => {
    expect(parseShardRanges('', 8)).toEqual([]);
    expect(parseShardRanges(' , ', 8)).toEqual([]);
  });

  it('refuses bad parts, reversed ranges and shards outside the cluster, naming --shards', () => {
    expect(() => parseShardRanges('a', 8)).toThrow(/--shards: "a" is not N or N-M/);
    expect(() => parseShardRanges('1-', 8)).toThrow(/--shards/);
    expect(() => parseShardRanges('-1', 8)).toThrow(/--shards/);
    expect(() => parseShardRanges('5-2', 8)).toThrow(/--shards: range "5-2" is reversed/);
    expect(() => parseShardRanges('8', 8)).toThrow(/--shards: 8 is outside 0..7/);
    expect(() => parseShardRanges('0-8', 8)).toThrow(/outside/);
  });
});
