/**
 * Per-namespace quotas (`--quotas-file`), checked before anything is written,
 * so a refused request leaves nothing behind:
 * - `max_payload_bytes`: the largest payload of one schedule;
 * - `schedules_per_second`: a token bucket per namespace and daemon (burst:
 *   one second's worth); a batch takes as many tokens as it has requests, all
 *   or none;
 * - `max_scheduled_runs`: runs waiting to fire (scheduled, buffered). Counted
 *   in Postgres at most once a second per namespace, plus what this daemon
 *   admitted since: with several daemons a namespace may overshoot by what
 *   the others admit within that second.
 *
 * The file maps a namespace (or "*", every namespace without its own entry)
 * to its quotas; it is re-read when it changes (a broken edit keeps the
 * previous quotas). No file: no quotas.
 *
 * States per namespace: its bucket (tokens, last refill) and its count (value,
 * when read, admitted since). Invariant: tokens ≤ schedules_per_second.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { COUNT_WAITING_RUNS } from '../db/queries/jobs.js';
import { resourceExhausted } from '../errors.js';
import type { Logger } from '../log.js';
import { parseJsonFile, WatchedFile } from '../watched-file.js';

export interface Quota {
  maxPayloadBytes: number | null;
  schedulesPerSecond: number | null;
  maxScheduledRuns: number | null;
}

export type QuotaTable = ReadonlyMap<string, Quota>;

const COUNT_TTL_MS = 1_000;
const NO_QUOTAS: QuotaTable = new Map();

/** Parses the quotas file; errors name the namespace and field. */
export function parseQuotas(text: string, source: string): QuotaTable {
  const doc = parseJsonFile(text, source);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${source}: must be an object of namespace → quotas`);
  const out = new Map<string, Quota>();
  for (const [ns, q] of Object.entries(doc as Record<string, unknown>)) {
    if (ns !== '*' && !/^[A-Za-z0-9_.-]{1,64}$/.test(ns)) throw new Error(`${source}: "${ns}" is not a namespace (or "*")`);
    if (typeof q !== 'object' || q === null) throw new Error(`${source}: ${ns}: must be an object`);
    const o = q as Record<string, unknown>;
    const known = ['max_payload_bytes', 'schedules_per_second', 'max_scheduled_runs'];
    const unknown = Object.keys(o).find((k) => !known.includes(k));
    if (unknown) throw new Error(`${source}: ${ns}.${unknown}: not a quota (known: ${known.join(', ')})`);
    const num = (k: string): number | null => {
      if (o[k] === undefined) return null;
      if (!Number.isSafeInteger(o[k]) || (o[k] as number) < 1) throw new Error(`${source}: ${ns}.${k}: a positive integer (got ${JSON.stringify(o[k])})`);
      return o[k] as number;
    };
    out.set(ns, { maxPayloadBytes: num('max_payload_bytes'), schedulesPerSecond: num('schedules_per_second'), maxScheduledRuns: num('max_scheduled_runs') });
  }
  return out;
}

interface Bucket {
  tokens: number;
  atMs: number;
}
interface Count {
  value: number;
  readAtMs: number;
}

export class NamespaceQuotas {
  private readonly file: WatchedFile<QuotaTable> | null;
  private readonly buckets = new Map<string, Bucket>();
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly db: Db,
    log: Logger,
    path: string | null,
    pollMs: number,
  ) {
    this.file = path ? new WatchedFile(path, parseQuotas, 'quotas', log, pollMs) : null;
  }

  private get table(): QuotaTable {
    return this.file?.current ?? NO_QUOTAS;
  }

  start(): void {
    this.file?.start();
  }

  stop(): void {
    this.file?.stop();
  }

  quotaOf(namespace: string): Quota | undefined {
    return this.table.get(namespace) ?? this.table.get('*');
  }

  /** Admits a request's schedules (all or none), or throws RESOURCE_EXHAUSTED naming the quota. */
  async admit(inputs: readonly { namespace: string; payload: Buffer }[], nowMs: number): Promise<void> {
    if (this.table.size === 0) return;
    const perNs = new Map<string, number>();
    inputs.forEach((i, k) => {
      const q = this.quotaOf(i.namespace);
      if (!q) return;
      if (q.maxPayloadBytes !== null && i.payload.length > q.maxPayloadBytes)
        throw resourceExhausted(`quota max_payload_bytes of namespace "${i.namespace}": request ${k} has ${i.payload.length} bytes, the quota is ${q.maxPayloadBytes}`);
      perNs.set(i.namespace, (perNs.get(i.namespace) ?? 0) + 1);
    });
    for (const [ns, n] of perNs) {
      const q = this.quotaOf(ns)!;
      if (q.maxScheduledRuns !== null) {
        const waiting = await this.waitingRuns(ns, nowMs);
        if (waiting + n > q.maxScheduledRuns)
          throw resourceExhausted(`quota max_scheduled_runs of namespace "${ns}": ${waiting} runs waiting to fire + ${n} new > ${q.maxScheduledRuns}`);
      }
      if (q.schedulesPerSecond !== null && this.bucket(ns, q.schedulesPerSecond, nowMs).tokens < n)
        throw resourceExhausted(`quota schedules_per_second of namespace "${ns}" (${q.schedulesPerSecond}/s): ${n} schedules refused, retry later`);
    }
    // Every namespace passed: take the tokens and count the runs.
    for (const [ns, n] of perNs) {
      const q = this.quotaOf(ns)!;
      if (q.schedulesPerSecond !== null) this.bucket(ns, q.schedulesPerSecond, nowMs).tokens -= n;
      const c = this.counts.get(ns);
      if (c) c.value += n;
    }
  }

  private bucket(ns: string, rate: number, nowMs: number): Bucket {
    let b = this.buckets.get(ns);
    if (!b) {
      b = { tokens: rate, atMs: nowMs };
      this.buckets.set(ns, b);
    }
    b.tokens = Math.min(rate, b.tokens + ((nowMs - b.atMs) * rate) / 1000);
    b.atMs = nowMs;
    return b;
  }

  private async waitingRuns(ns: string, nowMs: number): Promise<number> {
    const c = this.counts.get(ns);
    if (c && nowMs - c.readAtMs < COUNT_TTL_MS) return c.value;
    const { rows } = await query<{ n: string }>(this.db, COUNT_WAITING_RUNS, [ns]);
    const fresh = { value: Number(rows[0]?.n ?? 0), readAtMs: nowMs };
    this.counts.set(ns, fresh);
    return fresh.value;
  }
}
