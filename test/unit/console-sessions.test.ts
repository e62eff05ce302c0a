/**
 * The web console's API sessions: one client per bearer token (keyed by its
 * hash), reused while in use, the least recently used closed past the cap.
 */
import { describe, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import { ApiSessions } from '../../console/server/sessions.js';

interface FakeClient {
  token: string | undefined;
  closed: boolean;
  close(): void;
}

describe('ApiSessions', () => {
  it('gives each token its own client, the same one again, and closes the least recently used past 32', () => {
    let now = 0;
    const made: FakeClient[] = [];
    const sessions = new ApiSessions({
      makeClient: (token) => {
        const c: FakeClient = { token, closed: false, close: () => (c.closed = true) };
        made.push(c);
        return c as unknown as TimelaneClient;
      },
      streamsPerQueue: () => ({}),
      now: () => now,
    });
    try {
      const open = sessions.get(undefined);
      expect((open.client as unknown as FakeClient).token).toBeUndefined();
      const a = sessions.get('token-a');
      expect(sessions.get('token-a')).toBe(a);
      expect(sessions.get('token-b')).not.toBe(a);
      for (let i = 0; i < 29; i++) {
        now += 1;
        sessions.get(`token-${i}`);
      }
      expect(sessions.size).toBe(32);
      now += 1;
      sessions.get('token-a'); // a is used again: no longer the oldest
      now += 1;
      sessions.get('one-more');
      expect(sessions.size).toBe(32);
      expect((open.client as unknown as FakeClient).closed).toBe(true); // the oldest
      expect((a.client as unknown as FakeClient).closed).toBe(false);
    } finally {
      sessions.stop();
    }
    expect(made.every((c) => c.closed)).toBe(true);
  });
});
