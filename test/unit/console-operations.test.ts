/**
 * The console's operation log: a background action refused by the daemon
 * (no right to call it) is no operation — refused at once, the HTTP answer
 * is the refusal; refused late, it leaves the log — so callers without the
 * right cannot push the operators' results out of the 20 kept.
 */
import { describe, expect, it } from 'vitest';
import { OperationLog } from '../../console/server/operations.js';

const denied = Object.assign(new Error('7 PERMISSION_DENIED: reader may not call Rebalance'), { code: 7, details: 'reader may not call Rebalance' });
const precondition = Object.assign(new Error('9 FAILED_PRECONDITION: not a cluster'), { code: 9, details: 'not a cluster' });
const badShard = Object.assign(new Error('3 INVALID_ARGUMENT: shard: must be 0..7'), { code: 3, details: 'shard: must be 0..7' });
const noMember = Object.assign(new Error('5 NOT_FOUND: no member nobody'), { code: 5, details: 'no member nobody' });
const unavailable = Object.assign(new Error('14 UNAVAILABLE: Redis away'), { code: 14, details: 'Redis away' });

describe('OperationLog', () => {
  it('a call refused at once rejects and records nothing (before: answered 202, and the log kept it)', async () => {
    const log = new OperationLog();
    await expect(log.start('rebalance', 'cluster', () => Promise.reject(denied))).rejects.toBe(denied);
    expect(log.list()).toEqual([]);
  });

  it('a call refused late leaves the log; other failures stay, as failed', async () => {
    const log = new OperationLog();
    let refuse: (e: unknown) => void = () => undefined;
    const late = await log.start('drain', 'member a', () => new Promise<string>((_, reject) => (refuse = reject)), 10);
    expect(late.state).toBe('running');
    expect(log.list().map((o) => o.id)).toEqual([late.id]);
    refuse(denied);
    await new Promise((r) => setImmediate(r));
    expect(log.list()).toEqual([]);
    const failed = await log.start('drain', 'member b', () => Promise.reject(unavailable));
    expect(failed).toMatchObject({ state: 'failed', summary: 'Redis away' });
    const done = await log.start('move', 'shard 1 → b', async () => 'moved');
    expect(done).toMatchObject({ state: 'done', summary: 'moved' });
    expect(log.list().map((o) => o.state)).toEqual(['done', 'failed']);
  });

  it('a request refused as such at once (bad shard, unknown member, not a cluster) rejects and records nothing (before: 202 and a failed entry)', async () => {
    const log = new OperationLog();
    for (const err of [badShard, noMember, precondition]) await expect(log.start('move', 'shard 99 → a', () => Promise.reject(err))).rejects.toBe(err);
    expect(log.list()).toEqual([]);
  });

  it('40 refused calls do not push an operator’s result out', async () => {
    const log = new OperationLog();
    const mine = await log.start('rebalance', 'cluster', async () => '0 moves');
    for (let i = 0; i < 40; i++) await log.start('rebalance', 'cluster', () => Promise.reject(denied)).catch(() => undefined);
    expect(log.list().map((o) => o.id)).toEqual([mine.id]);
  });
});
