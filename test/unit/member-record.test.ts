/**
 * Member records read from Redis: one written by another version (a field
 * missing, or of another type) is read with defaults, and the assignment
 * over it works; one that is not this member's record is not a member.
 */
import { describe, expect, it } from 'vitest';
import { memberRecordOf } from '../../daemon/cluster/membership.js';
import { assignShards } from '../../daemon/cluster/assignment.js';

describe('memberRecordOf', () => {
  // Why: a record without `pinned` made assignShards throw, and every ListShards answered INTERNAL (a hunt).
  it('reads a record with fields missing with their defaults, and the assignment runs over it', () => {
    const rec = memberRecordOf('old', JSON.stringify({ id: 'old', address: '10.0.0.1:7070', startedAtMs: 5 }));
    expect(rec).toEqual({ id: 'old', address: '10.0.0.1:7070', startedAtMs: 5, lastSeenMs: 0, ownedShards: 0, pinned: [], adoptOrphans: false, standby: false });
    const view = { shardCount: 4, members: [rec!, memberRecordOf('new', JSON.stringify({ id: 'new', pinned: [], adoptOrphans: false, standby: false }))!], pins: new Map(), drained: new Set<string>(), overrides: new Map() };
    expect(assignShards(view).filter((o) => o !== null)).toHaveLength(4);
  });

  it('keeps only whole shard numbers of `pinned`, and the alive TTL when there is one', () => {
    expect(memberRecordOf('m', JSON.stringify({ id: 'm', pinned: [1, 'x', 2.5, 3], aliveTtlMs: 900 }))).toMatchObject({ pinned: [1, 3], aliveTtlMs: 900 });
  });

  it('is null for a record that is not JSON, not an object, or another member’s', () => {
    expect(memberRecordOf('m', '{not json')).toBeNull();
    expect(memberRecordOf('m', '42')).toBeNull();
    expect(memberRecordOf('m', 'null')).toBeNull();
    expect(memberRecordOf('m', JSON.stringify({ id: 'other' }))).toBeNull();
  });
});
