/**
 * Near-due notifications between daemons (and cancels of running runs).
 *
 * A daemon that schedules (or reschedules, or retries) a run due within the
 * window on a shard it does not own tells the owner with `pg_notify` inside
 * the inserting transaction, so the message is delivered on commit. The owner
 * keeps a dedicated LISTEN client (never a pooled one) that reconnects and
 * re-LISTENs; after every reconnect it asks for a repair scan, because
 * notifications sent while it was away are gone.
 *
 * States of the listener: connecting → listening (probed with SELECT 1 every
 * `probeEveryMs`, one probe at a time) → lost (an error, the end of the
 * connection, or a probe unanswered for `probeEveryMs`: the socket is
 * destroyed) → connecting again after a backoff of 100 ms doubling to 5 s;
 * stopped is terminal. Only the current client's events and probes count.
 */
import pg from 'pg';
import type { Logger } from '../log.js';
import type { Queryable } from '../db/pool.js';
import { query, timedQuery } from '../db/pool.js';
import type { RunRef } from '../run-ref.js';

export const channelFor = (schema: string): string => `timelane_runs_${schema}`;

const MAX_PAYLOAD = 7_800; // NOTIFY payloads must stay under 8000 bytes

/** Encodes runs as compact JSON tuples, split into payloads under the NOTIFY limit. */
export function encodeNearDue(runs: readonly RunRef[]): string[] {
  const out: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const r of runs) {
    const t = `[${r.runId},${r.shard},${r.dueAtMs},${r.priority}]`;
    if (size + t.length + 1 > MAX_PAYLOAD && parts.length) {
      out.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    parts.push(t);
    size += t.length + 1;
  }
  if (parts.length) out.push(`[${parts.join(',')}]`);
  return out;
}

/**
 * A cancel notification: `{"cancel":[run ids],"reason":"…"}`, told to the
 * owner of the runs' shard (which holds their worker streams). Near-due
 * payloads are arrays, so the first character tells the two apart.
 */
export interface CancelNotice {
  runIds: number[];
  reason: string;
}

export function encodeCancels(runIds: readonly number[], reason: string): string[] {
  const out: string[] = [];
  const per = Math.floor((MAX_PAYLOAD - 300) / 17); // run ids are at most 16 digits
  for (let k = 0; k < runIds.length; k += per) out.push(JSON.stringify({ cancel: runIds.slice(k, k + per), reason: reason.slice(0, 200) }));
  return out;
}

export function decodeNotice(payload: string): { runs: RunRef[] } | { cancel: CancelNotice } {
  if (payload.startsWith('{')) {
    const m = JSON.parse(payload) as { cancel: number[]; reason?: string };
    return { cancel: { runIds: m.cancel, reason: m.reason ?? '' } };
  }
  return { runs: decodeNearDue(payload) };
}

export async function publishCancels(db: Queryable, schema: string, runIds: readonly number[], reason: string): Promise<void> {
  for (const payload of encodeCancels(runIds, reason)) await query(db, NOTIFY, [channelFor(schema), payload]);
}

export function decodeNearDue(payload: string): RunRef[] {
  const tuples = JSON.parse(payload) as [number, number, number, number][];
  return tuples.map(([runId, shard, dueAtMs, priority]) => ({ runId, shard, dueAtMs, priority }));
}

/** notifyNearDue — $1 channel, $2 payload. Run inside the inserting transaction. */
const NOTIFY = `SELECT pg_notify($1, $2)`;

export async function publishNearDue(db: Queryable, schema: string, runs: readonly RunRef[]): Promise<void> {
  for (const payload of encodeNearDue(runs)) await query(db, NOTIFY, [channelFor(schema), payload]);
}

export interface ListenerOptions {
  clientConfig: pg.ClientConfig;
  schema: string;
  log: Logger;
  onRuns: (runs: RunRef[]) => void;
  /** Runs whose workers are to be told to stop (on shards this daemon may own). */
  onCancel: (notice: CancelNotice) => void;
  /** Called after every (re)connect: notifications may have been missed. */
  onReconnect: () => void;
  /**
   * Every this many ms the connection is asked `SELECT 1`, and dropped (then
   * reconnected, then a repair scan) if no answer comes within the same time.
   * A LISTEN connection sends nothing of its own, so without a probe one gone
   * silent (half-open) would miss every notification, unnoticed, until TCP
   * gives up. 0: no probe. @defaultValue 0
   */
  probeEveryMs?: number;
}

export class NearDueListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private backoffMs = 100;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing = false;

  constructor(private readonly opts: ListenerOptions) {}

  start(): void {
    void this.connect();
  }

  get connected(): boolean {
    return this.client !== null;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client(this.opts.clientConfig);
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (msg) => {
      if (!msg.payload) return;
      try {
        const n = decodeNotice(msg.payload);
        if ('runs' in n) this.opts.onRuns(n.runs);
        else this.opts.onCancel(n.cancel);
      } catch (err) {
        this.opts.log.warn({ err }, 'bad near-due notification ignored');
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channelFor(this.opts.schema)}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.backoffMs = 100;
      this.startProbe(client);
      this.opts.onReconnect();
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.lost(null, err);
    }
  }

  private startProbe(client: pg.Client): void {
    const every = this.opts.probeEveryMs ?? 0;
    if (every <= 0) return;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probing = false;
    this.probeTimer = setInterval(() => {
      if (this.client !== client || this.probing) return;
      this.probing = true;
      client.query(timedQuery('SELECT 1', every)).then(
        () => {
          this.probing = false;
        },
        (err: unknown) => {
          this.probing = false;
          if (this.client !== client) return;
          this.opts.log.warn({ err: String(err) }, 'LISTEN connection did not answer its probe: dropping it');
          // The 'end' that follows reconnects (and asks for a repair scan).
          client.connection.stream.destroy();
        },
      );
    }, every);
    this.probeTimer.unref();
  }

  private lost(client: pg.Client | null, err: unknown): void {
    if (client && this.client !== client) return;
    if (this.client) this.opts.log.warn({ err: String(err) }, 'LISTEN connection lost; reconnecting');
    this.client = null;
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 5_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    const c = this.client;
    this.client = null;
    if (c) {
      c.removeAllListeners('end');
      await c.end().catch(() => undefined);
    }
  }
}
