/**
 * The web console's API sessions: one client per bearer token (keyed by its
 * hash), reused while in use, the least recently used idle one closed past
 * the cap, never one under a request, and none kept for a refused token.
 */
import { describe, expect, it } from 'vitest';
import type { TimelaneClient } from '@timelane/client';
import { ApiSessions, type ApiSession } from '../../console/server/sessions.js';

interface FakeClient {
  token: string | undefined;
  closed: boolean;
  close(): void;
}

function setup() {
  const clock = { now: 0 };
  const made: FakeClient[] = [];
  const sessions = new ApiSessions({
    makeClient: (token) => {
      const c: FakeClient = { token, closed: false, close: () => (c.closed = true) };
      made.push(c);
      return c as unknown as TimelaneClient;
    },
    streamsPerQueue: () => ({}),
    now: () => clock.now,
  });
  const refused = (err: unknown): boolean => err === 'refused';
  /** The session a request with `token` used (the request ends at once). */
  const use = (token: string | undefined): Promise<ApiSession> => sessions.with(token, refused, async (s) => s);
  return { clock, made, sessions, refused, use };
}

const fake = (s: ApiSession): FakeClient => s.client as unknown as FakeClient;

describe('ApiSessions', () => {
  it('gives each token its own client, the same one again, and closes the least recently used past 32', async () => {
    const { clock, made, sessions, use } = setup();
    try {
      const open = await use(undefined);
      expect(fake(open).token).toBeUndefined();
      const a = await use('token-a');
      expect(await use('token-a')).toBe(a);
      expect(await use('token-b')).not.toBe(a);
      for (let i = 0; i < 29; i++) {
        clock.now += 1;
        await use(`token-${i}`);
      }
      expect(sessions.size).toBe(32);
      clock.now += 1;
      await use('token-a'); // a is used again: no longer the oldest
      clock.now += 1;
      await use('one-more');
      expect(sessions.size).toBe(32);
      expect(fake(open).closed).toBe(true); // the oldest
      expect(fake(a).closed).toBe(false);
    } finally {
      sessions.stop();
    }
    expect(made.every((c) => c.closed)).toBe(true);
  });

  it('never closes a client under a request: 40 other tokens arriving meanwhile leave it open', async () => {
    const { clock, sessions, use } = setup();
    try {
      let finish: () => void = () => undefined;
      const slow = new Promise<void>((resolve) => (finish = resolve));
      let admin: ApiSession | undefined;
      const pending = sessions.with('admin-token', () => false, async (s) => {
        admin = s;
        await slow;
        return fake(s).closed;
      });
      for (let i = 0; i < 40; i++) {
        clock.now += 1;
        await use(`bogus-${i}`);
      }
      finish();
      // Before: the admin's client was the oldest, closed by the 32nd new token, and its request failed (500).
      expect(await pending).toBe(false);
      expect(fake(admin!).closed).toBe(false);
    } finally {
      sessions.stop();
    }
  });

  it('a client held past its request (a background move) is not closed until released', async () => {
    const { clock, sessions, use } = setup();
    try {
      let release: () => void = () => undefined;
      const admin = await sessions.with('admin-token', () => false, async (s) => {
        release = s.hold();
        return s;
      });
      for (let i = 0; i < 40; i++) {
        clock.now += 1;
        await use(`other-${i}`);
      }
      // Before: the request had ended, so the 32nd new token closed it under the running operation.
      expect(fake(admin).closed).toBe(false);
      release();
      clock.now += 1;
      await use('one-more');
      expect(fake(admin).closed).toBe(true); // the least recently used, idle again
    } finally {
      sessions.stop();
    }
  });

  it('keeps no session for a token the daemon refused', async () => {
    const { sessions, refused } = setup();
    try {
      let client: FakeClient | undefined;
      await expect(
        sessions.with('made-up', refused, async (s) => {
          client = fake(s);
          throw 'refused';
        }),
      ).rejects.toBe('refused');
      expect(client!.closed).toBe(true);
      expect(sessions.size).toBe(0);
      // Another failure (a role, a bad request) keeps it.
      await expect(sessions.with('real', refused, async () => Promise.reject(new Error('denied')))).rejects.toThrow('denied');
      expect(sessions.size).toBe(1);
    } finally {
      sessions.stop();
    }
  });
});
