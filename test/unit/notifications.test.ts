import { describe, expect, it } from 'vitest';
import { channelFor, decodeNearDue, encodeNearDue } from '../../daemon/slow/notifications.js';
import type { RunRef } from '../../daemon/run-ref.js';

/** Postgres refuses NOTIFY payloads of 8000 bytes or more (default build). */
const NOTIFY_LIMIT = 8_000;

function runs(n: number, from = 1): RunRef[] {
  return Array.from({ length: n }, (_, i) => ({
    runId: from + i,
    shard: (from + i) % 256,
    dueAtMs: 1_700_000_000_000 + i * 7,
    priority: (i % 5) - 2,
  }));
}

describe('near-due notification payloads', () => {
  it('round-trips runs through encode/decode', () => {
    const input = runs(5);
    const payloads = encodeNearDue(input);
    expect(payloads).toHaveLength(1);
    expect(decodeNearDue(payloads[0])).toEqual(input);
  });

  it('keeps extreme values exact (ids and due times up to 2^53, negative priorities)', () => {
    const input: RunRef[] = [
      { runId: Number.MAX_SAFE_INTEGER, shard: 65_535, dueAtMs: 8_640_000_000_000_000, priority: -2_147_483_648 },
      { runId: 1, shard: 0, dueAtMs: 0, priority: 2_147_483_647 },
    ];
    expect(encodeNearDue(input).flatMap(decodeNearDue)).toEqual(input);
  });

  it('encodes nothing for no runs', () => {
    expect(encodeNearDue([])).toEqual([]);
  });

  it('splits large batches into payloads under the NOTIFY limit, losing and reordering nothing', () => {
    const input = runs(5_000, 9_000_000_000);
    const payloads = encodeNearDue(input);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) {
      expect(Buffer.byteLength(p, 'utf8')).toBeLessThan(NOTIFY_LIMIT);
      expect(() => JSON.parse(p)).not.toThrow();
    }
    expect(payloads.flatMap(decodeNearDue)).toEqual(input);
    // Chunks are reasonably full: no payload-per-run degeneration.
    const perChunk = input.length / payloads.length;
    expect(perChunk).toBeGreaterThan(100);
  });

  it('every chunk stays under the limit whatever the tuple widths', () => {
    for (const n of [1, 199, 200, 201, 250, 251, 1_000]) {
      const input = runs(n, 10 ** 15);
      const payloads = encodeNearDue(input);
      expect(payloads.every((p) => Buffer.byteLength(p) < NOTIFY_LIMIT)).toBe(true);
      expect(payloads.flatMap(decodeNearDue)).toEqual(input);
    }
  });

  it('decode rejects a payload that is not JSON', () => {
    expect(() => decodeNearDue('not json')).toThrow();
  });

  it('the channel is per schema', () => {
    expect(channelFor('timelane')).toBe('timelane_runs_timelane');
    expect(channelFor('other')).not.toBe(channelFor('timelane'));
  });
});
