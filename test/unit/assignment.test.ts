import { describe, expect, it } from 'vitest';
import { assignShards, planMoves, type ClusterView, type MemberView } from '../../daemon/cluster/assignment.js';

const member = (id: string, extra: Partial<MemberView> = {}): MemberView => ({ id, pinned: [], adoptOrphans: false, standby: false, ...extra });
const view = (members: MemberView[], extra: Partial<ClusterView> = {}): ClusterView => ({
  shardCount: 64,
  members,
  pins: new Map(),
  drained: new Set(),
  overrides: new Map(),
  ...extra,
});
const counts = (out: (string | null)[]): Record<string, number> =>
  out.reduce<Record<string, number>>((acc, o) => ((acc[o ?? 'none'] = (acc[o ?? 'none'] ?? 0) + 1), acc), {});

describe('assignShards', () => {
  it('splits shards evenly (within one) and deterministically', () => {
    const v = view([member('a'), member('b'), member('c')]);
    const out = assignShards(v);
    const c = counts(out);
    expect(Object.values(c).sort()).toEqual([21, 21, 22]);
    expect(assignShards(view([member('c'), member('a'), member('b')]))).toEqual(out);
  });

  it('moves few shards when a member joins', () => {
    const before = assignShards(view([member('a'), member('b'), member('c')]));
    const after = assignShards(view([member('a'), member('b'), member('c'), member('d')]));
    expect(counts(after).d).toBe(16);
    // Rendezvous keeps most shards where they were; only about a quarter move.
    expect(planMoves(before, after).length).toBeLessThan(32);
  });

  it('gives pinned shards to their member, and orphans to adopters', () => {
    const pins = new Map<number, string>();
    for (let s = 0; s < 16; s++) pins.set(s, 'side-0');
    const live = view([member('side-0', { pinned: [...pins.keys()] }), member('a'), member('standby', { standby: true })], { pins });
    const out = assignShards(live);
    for (let s = 0; s < 16; s++) expect(out[s]).toBe('side-0');
    expect(out.slice(16).every((o) => o === 'a')).toBe(true); // standby owns no balanced share
    const gone = assignShards(view([member('a'), member('standby', { standby: true })], { pins }));
    for (let s = 0; s < 16; s++) expect(gone[s]).toBe('standby');
    // With no adopter the balanced members take orphans rather than leave them unfired.
    const noAdopter = assignShards(view([member('a')], { pins }));
    expect(noAdopter.every((o) => o === 'a')).toBe(true);
  });

  it('applies overrides to live members and ignores drained ones', () => {
    const v = view([member('a'), member('b')], { overrides: new Map([[3, 'b'], [4, 'zz']]), drained: new Set(['a']) });
    const out = assignShards(v);
    expect(out.every((o) => o === 'b')).toBe(true);
    const moved = assignShards(view([member('a'), member('b')], { overrides: new Map([[3, 'a']]) }));
    expect(moved[3]).toBe('a');
  });

  it('an operator move changes that shard and no other', () => {
    const members = [member('a'), member('b'), member('c')];
    const before = assignShards(view(members));
    const shard = before.findIndex((o) => o !== 'a');
    const after = assignShards(view(members, { overrides: new Map([[shard, 'a']]) }));
    expect(planMoves(before, after)).toEqual([{ shard, from: before[shard], to: 'a' }]);
  });

  it('leaves shards unowned only when nobody is live', () => {
    expect(assignShards(view([])).every((o) => o === null)).toBe(true);
  });

  it("moves only a suspect's shards, each straight to where it goes once the suspect's record expires", () => {
    const abc = [member('a'), member('b'), member('c')];
    const healthy = assignShards(view(abc));
    const suspected = assignShards(view(abc, { suspects: new Set(['b']) }));
    const expired = assignShards(view([member('a'), member('c')]));
    for (let s = 0; s < 64; s++) {
      if (healthy[s] === 'b') expect(suspected[s], `shard ${s} of the suspect`).toBe(expired[s]);
      else expect(suspected[s], `shard ${s} of a live member stays`).toBe(healthy[s]);
    }
    expect(suspected).not.toContain('b');
    // The record expiring later moves none of the suspect's shards again.
    const again = planMoves(suspected, expired).filter((m) => healthy[m.shard] === 'b');
    expect(again).toEqual([]);
    // A suspicion that clears gives the member back exactly its share.
    expect(assignShards(view(abc, { suspects: new Set() }))).toEqual(healthy);
  });

  it('hands a suspect pinned member’s shards to the adopters, and ignores moves onto a suspect', () => {
    const pins = new Map<number, string>();
    for (let s = 0; s < 16; s++) pins.set(s, 'side-0');
    const members = [member('side-0', { pinned: [...pins.keys()] }), member('a'), member('standby', { standby: true })];
    const out = assignShards(view(members, { pins, suspects: new Set(['side-0']) }));
    for (let s = 0; s < 16; s++) expect(out[s]).toBe('standby');
    expect(out.slice(16).every((o) => o === 'a')).toBe(true);
    const moved = assignShards(view([member('a'), member('b')], { overrides: new Map([[3, 'b']]), suspects: new Set(['b']) }));
    expect(moved.every((o) => o === 'a')).toBe(true);
  });
});
