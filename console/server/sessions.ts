/**
 * API sessions: one TimelaneClient per bearer token a browser sends, so each
 * person's calls reach the daemon's gRPC API with their own credential and
 * its gate (authentication, role, namespace) decides what they may do —
 * exactly as for the CLI. Without a token (an open daemon, or mTLS where the
 * console presents its own certificate) every request shares one client.
 *
 * Owns: the clients, keyed by the token's SHA-256, each with its own queue
 *   statistics cache (one person's reads are never served to another).
 * States of a session: open (in the map) → closed (evicted: idle past
 *   IDLE_MS, or the least recently used when MAX_SESSIONS are open; its
 *   token refused by the daemon; or stop()).
 * Invariants: at most MAX_SESSIONS clients, except while every one has a
 *   request under way; a client is never closed under a request (before, 40
 *   made-up tokens closed an admin's client mid-request: a 500); a closed
 *   client is never handed out; tokens are held only by their clients'
 *   interceptors (the map keys are hashes).
 */
import { createHash } from 'node:crypto';
import type { TimelaneClient } from '@timelane/client';
import { QueueStatsReader } from './queue-stats.js';

const MAX_SESSIONS = 32;
const IDLE_MS = 10 * 60_000;
const SWEEP_MS = 60_000;

export interface ApiSession {
  client: TimelaneClient;
  queues: QueueStatsReader;
  /** Keeps the client open past `with` (work that outlives the request); call the result when done. */
  hold(): () => void;
}

interface Entry extends ApiSession {
  lastUsedMs: number;
  /** Requests using its client now: it is never closed under them. */
  inFlight: number;
}

export interface SessionsOptions {
  /** Makes a client that sends `token` (undefined: none). */
  makeClient: (token: string | undefined) => TimelaneClient;
  streamsPerQueue: () => Record<string, number>;
  now?: () => number;
}

export class ApiSessions {
  private readonly byKey = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: SessionsOptions) {
    this.now = opts.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Runs `use` with the session for a token (undefined: the shared
   * unauthenticated one). Its client stays open until `use` settles (and
   * while held); a token the daemon refused (`refused(err)`) leaves no
   * session behind. (Made-up tokens still each evict an idle session on
   * their way in — its next request makes a new client — never a busy one.)
   */
  async with<T>(token: string | undefined, refused: (err: unknown) => boolean, use: (s: ApiSession) => Promise<T>): Promise<T> {
    const key = token === undefined ? '' : createHash('sha256').update(token).digest('hex');
    let entry = this.byKey.get(key);
    if (!entry) {
      if (this.byKey.size >= MAX_SESSIONS) this.evictOldest();
      const client = this.opts.makeClient(token);
      const created: Entry = {
        client,
        queues: new QueueStatsReader({ client, streamsPerQueue: this.opts.streamsPerQueue, now: this.now }),
        lastUsedMs: 0,
        inFlight: 0,
        hold: () => {
          created.inFlight++;
          let held = true;
          return () => {
            if (held) created.inFlight--;
            held = false;
          };
        },
      };
      entry = created;
      this.byKey.set(key, entry);
    }
    entry.lastUsedMs = this.now();
    entry.inFlight++;
    try {
      return await use(entry);
    } catch (err) {
      if (refused(err) && entry.inFlight === 1 && this.byKey.get(key) === entry) this.drop(key, entry);
      throw err;
    } finally {
      entry.inFlight--;
    }
  }

  get size(): number {
    return this.byKey.size;
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const e of this.byKey.values()) e.client.close();
    this.byKey.clear();
  }

  private sweep(): void {
    const cutoff = this.now() - IDLE_MS;
    for (const [key, e] of this.byKey) if (e.lastUsedMs < cutoff && e.inFlight === 0) this.drop(key, e);
  }

  /** Closes the least recently used session with no request under way (none: the map grows past MAX_SESSIONS for a while). */
  private evictOldest(): void {
    let oldest: [string, Entry] | null = null;
    for (const kv of this.byKey) if (kv[1].inFlight === 0 && (!oldest || kv[1].lastUsedMs < oldest[1].lastUsedMs)) oldest = kv;
    if (oldest) this.drop(oldest[0], oldest[1]);
  }

  private drop(key: string, e: Entry): void {
    e.client.close();
    this.byKey.delete(key);
  }
}
