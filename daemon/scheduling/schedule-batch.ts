/**
 * The write path of Schedule and ScheduleBatch: a batch of one-shot jobs,
 * all or none, with the cost per request kept to a few array elements.
 *
 * - Ids and shards are computed in one loop; every column goes to Postgres as
 *   one array literal, and all payloads as one binary blob (pg-arrays.ts).
 * - One statement inserts the jobs and their first runs and answers with the
 *   run ids as one string (jobs.ts, insertJobs). Requests skipped by their
 *   dedupe key are answered by one more query for all of them.
 * - The result holds references (ids, shard, due time, status), never payloads.
 *
 * Transaction: a plain batch is one statement, atomic by itself. A batch that
 * needs more statements runs them in one transaction: with a batch key (its
 * row is claimed first, so a concurrent retry waits, then replays), with
 * dedupe keys (their lookup fails the whole batch rather than answer half),
 * or with near-due runs on shards another daemon owns (`pg_notify` inside the
 * inserting transaction, delivered on commit).
 *
 * Routing is the engine's router (daemon/engine/router.ts), as for every
 * committed run: a new run on a shard this daemon owns is offered to its
 * engine after commit; one due within the window on another daemon's shard is
 * announced with `pg_notify` inside the transaction, its horizon taken after
 * the insert so that a scan racing the commit cannot miss it. (Should a batch
 * planned without a transaction find such runs after all, the notify follows
 * the commit: later, never lost before the repair scan.)
 */
import type pg from 'pg';
import type { Queryable } from '../db/pool.js';
import { query, transaction } from '../db/pool.js';
import { mapStorageError } from '../db/storage-errors.js';
import type { DeliveryMode, RunStatus } from '../db/queries/columns.js';
import { CLAIM_BATCH_KEY, INSERT_JOBS, INSERT_JOBS_DEDUPE, SELECT_BATCH_KEY, SELECT_DEDUPE_REFS, SELECT_JOB_REFS } from '../db/queries/jobs.js';
import { failedPrecondition } from '../errors.js';
import { shardOf } from '../shard-of.js';
import { newIds } from '../ids.js';
import type { AfterCommit } from '../engine/router.js';
import type { RunRef } from '../run-ref.js';
import { batchJobIds } from './batch-key.js';
import { packBytes, plainArray, sharedPlainArray, sharedTextArray, textArray } from './pg-arrays.js';
import type { ScheduleInput, Scheduled, ScheduledBatch, SchedulingDeps } from './types.js';
import type { TraceContext } from '../tracing/trace-context.js';

/** Where request `k`'s fields are, for error messages: `requests[k].` in a batch, nothing in a single Schedule. */
export type RequestPath = (k: number) => string;
const inBatch: RequestPath = (k) => `requests[${k}].`;

/**
 * Schedules `inputs` (already validated) in one transaction. With a
 * `batchId`, every input must name the same namespace (the key's scope); a
 * batch whose key was committed before is replayed, not applied. `trace` is
 * stored on every new run (the call's trace context; null: none).
 */
export async function scheduleBatch(
  deps: SchedulingDeps,
  inputs: readonly ScheduleInput[],
  batchId: string | null,
  trace: TraceContext | null = null,
  at: RequestPath = inBatch,
): Promise<ScheduledBatch> {
  const n = inputs.length;
  if (n === 0) return { scheduled: [], replayed: false };
  const namespace = inputs[0].namespace;
  if (batchId !== null && inputs.some((i) => i.namespace !== namespace)) throw new Error('scheduleBatch: a keyed batch must use one namespace');
  const planHorizon = deps.router.horizon();
  const ids = batchId === null ? newIds(n) : batchJobIds(namespace, batchId, n);
  const shards = new Array<number>(n);
  let dedupe = false;
  let notify = false;
  for (let k = 0; k < n; k++) {
    shards[k] = shardOf(ids[k], deps.shardCount);
    if (inputs[k].dedupeKey !== null) dedupe = true;
    if (!notify && deps.router.isRemoteNearDue(shards[k], inputs[k].dueAtMs, planHorizon)) notify = true;
  }
  const params = insertParams(ids, shards, inputs, dedupe, trace);

  const write = async (db: Queryable): Promise<ScheduledBatch & { afterCommit: AfterCommit | null }> => {
    if (batchId !== null && !(await claimBatchKey(db, namespace, batchId, n))) {
      return { scheduled: await replay(db, inputs, ids, batchId), replayed: true, afterCommit: null };
    }
    const scheduled = await insert(db, dedupe ? INSERT_DEDUPE : INSERT, params, ids, shards, inputs, batchId);
    if (dedupe) await answerDeduplicated(db, inputs, scheduled, at, (k) => `${at(k)}dedupe_key: its job vanished while deduplicating; retry`);
    const done = scheduled as Scheduled[];
    return { scheduled: done, replayed: false, afterCommit: await deps.router.inTransaction(db, newRuns(done)) };
  };
  const { afterCommit, ...out } = batchId !== null || dedupe || notify ? await transaction(deps.db, write) : await write(deps.db);
  afterCommit?.();
  return out;
}

/**
 * The insert statements, prepared once per connection: a batch then skips
 * parsing and planning a large statement (about a millisecond of Postgres
 * time, on every batch's critical path).
 */
interface Named {
  name: string;
  text: string;
}
const INSERT: Named = { name: 'timelane_insert_jobs', text: INSERT_JOBS };
const INSERT_DEDUPE: Named = { name: 'timelane_insert_jobs_dedupe', text: INSERT_JOBS_DEDUPE };

async function queryNamed<R extends pg.QueryResultRow>(db: Queryable, statement: Named, values: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>({ name: statement.name, text: statement.text, values });
  } catch (err) {
    throw mapStorageError(err);
  }
}

/** Parameters of insertJobs, in its order: one array per column (one element for a column shared by all). */
function insertParams(ids: readonly string[], shards: readonly number[], inputs: readonly ScheduleInput[], dedupe: boolean, trace: TraceContext | null): unknown[] {
  const n = inputs.length;
  const namespaces = new Array<string>(n);
  const queues = new Array<string>(n);
  const payloads = new Array<Buffer>(n);
  const priorities = new Array<number>(n);
  const dedupeKeys = new Array<string | null>(n);
  const deliveries = new Array<string>(n);
  const maxAttempts = new Array<number>(n);
  const initialBackoffs = new Array<number>(n);
  const maxBackoffs = new Array<number>(n);
  const leases = new Array<number>(n);
  const dues = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    const i = inputs[k];
    namespaces[k] = i.namespace;
    queues[k] = i.queue;
    payloads[k] = i.payload;
    priorities[k] = i.priority;
    dedupeKeys[k] = i.dedupeKey;
    deliveries[k] = i.delivery;
    maxAttempts[k] = i.maxAttempts;
    initialBackoffs[k] = i.initialBackoffMs;
    maxBackoffs[k] = i.maxBackoffMs;
    leases[k] = i.leaseMs;
    dues[k] = i.dueAtMs;
  }
  const packed = packBytes(payloads);
  return [
    plainArray(ids),
    sharedTextArray(namespaces),
    sharedTextArray(queues),
    plainArray(shards),
    packed.bytes,
    packed.offsets,
    packed.lengths,
    sharedPlainArray(priorities),
    dedupe ? textArray(dedupeKeys) : '{}',
    sharedTextArray(deliveries),
    sharedPlainArray(maxAttempts),
    sharedPlainArray(initialBackoffs),
    sharedPlainArray(maxBackoffs),
    sharedPlainArray(leases),
    plainArray(dues),
    trace?.traceparent ?? null,
    trace?.tracestate ?? null,
  ];
}

/** Runs insertJobs; entries skipped by their dedupe key stay undefined. */
async function insert(
  db: Queryable,
  statement: Named,
  params: unknown[],
  ids: readonly string[],
  shards: readonly number[],
  inputs: readonly ScheduleInput[],
  batchId: string | null,
): Promise<(Scheduled | undefined)[]> {
  let runIds: string[];
  try {
    const { rows } = await queryNamed<{ run_ids: string }>(db, statement, params);
    runIds = rows[0].run_ids.split(',');
  } catch (err) {
    const e = err as { code?: string; constraint?: string };
    if (batchId !== null && e.code === '23505' && e.constraint === 'jobs_pkey') {
      throw failedPrecondition(`batch_id "${batchId}" was used by an earlier batch whose key has expired (after 24 hours); use a new batch_id`);
    }
    throw err;
  }
  const out = new Array<Scheduled | undefined>(inputs.length);
  for (let k = 0; k < inputs.length; k++) {
    if (runIds[k] === '') continue;
    const i = inputs[k];
    out[k] = {
      job: { id: ids[k], shard: shards[k], delivery: i.delivery },
      run: { id: Number(runIds[k]), job_id: ids[k], shard: shards[k], priority: i.priority, status: 'scheduled', due_at_ms: i.dueAtMs },
      deduplicated: false,
    };
  }
  return out;
}

/** A job that existed before this request: `idx` is the request it answers. */
interface RefRow {
  idx: number;
  job_id: string;
  shard: number;
  delivery: DeliveryMode;
  /** Null only for a recurring job with no run yet. */
  run_id: number | null;
  status: RunStatus;
  priority: number;
  due_at_ms: number;
}

function refOf(r: RefRow, deduplicated: boolean, at: RequestPath): Scheduled {
  if (r.run_id === null) throw failedPrecondition(`${at(r.idx)}dedupe_key: belongs to recurring job ${r.job_id}, which has no run yet`);
  return {
    job: { id: r.job_id, shard: r.shard, delivery: r.delivery },
    run: { id: r.run_id, job_id: r.job_id, shard: r.shard, priority: r.priority, status: r.status, due_at_ms: r.due_at_ms },
    deduplicated,
  };
}

/** Fills the entries left undefined with the jobs holding their dedupe keys, in one query. */
async function answerDeduplicated(
  db: Queryable,
  inputs: readonly ScheduleInput[],
  out: (Scheduled | undefined)[],
  at: RequestPath,
  missing: (k: number) => string,
): Promise<void> {
  const idx: number[] = [];
  const namespaces: string[] = [];
  const keys: string[] = [];
  for (let k = 0; k < out.length; k++) {
    const key = inputs[k].dedupeKey;
    if (out[k] !== undefined || key === null) continue;
    idx.push(k);
    namespaces.push(inputs[k].namespace);
    keys.push(key);
  }
  if (idx.length > 0) {
    const { rows } = await query<RefRow>(db, SELECT_DEDUPE_REFS, [plainArray(idx), textArray(namespaces), textArray(keys)]);
    for (const r of rows) out[r.idx] = refOf(r, true, at);
  }
  const gap = out.findIndex((s) => s === undefined);
  if (gap >= 0) throw failedPrecondition(missing(gap));
}

/**
 * Claims a batch key, first thing in the batch's transaction. False: a batch
 * with this key committed before (a concurrent one is waited for).
 */
async function claimBatchKey(db: Queryable, namespace: string, batchId: string, n: number): Promise<boolean> {
  const claimed = await query(db, CLAIM_BATCH_KEY, [namespace, batchId, n]);
  if (claimed.rowCount === 1) return true;
  const { rows } = await query<{ requests: number }>(db, SELECT_BATCH_KEY, [namespace, batchId]);
  const before = rows[0]?.requests;
  if (before === undefined) throw failedPrecondition(`batch_id "${batchId}": its record expired while being read; retry`);
  if (before !== n) throw failedPrecondition(`batch_id "${batchId}" was committed with ${before} requests, not ${n}: resend the same batch, or use a new batch_id`);
  return false;
}

/**
 * The reply of a committed batch, rebuilt: its jobs by their derived ids, and
 * the requests it deduplicated by their keys (as the original answered them).
 */
async function replay(db: Queryable, inputs: readonly ScheduleInput[], ids: readonly string[], batchId: string): Promise<Scheduled[]> {
  const out = new Array<Scheduled | undefined>(inputs.length);
  const { rows } = await query<RefRow>(db, SELECT_JOB_REFS, [plainArray(ids)]);
  for (const r of rows) out[r.idx] = refOf(r, false, inBatch);
  await answerDeduplicated(db, inputs, out, inBatch, (k) => `requests[${k}]: not part of the batch committed under batch_id "${batchId}" (resend the same requests, or use a new batch_id)`);
  return out as Scheduled[];
}

/** New (not deduplicated) runs due by `horizon` on the shards `pick` selects. */
function newRuns(scheduled: readonly Scheduled[]): RunRef[] {
  const out: RunRef[] = [];
  for (const s of scheduled) {
    if (s.deduplicated) continue;
    out.push({ runId: s.run.id, shard: s.run.shard, dueAtMs: s.run.due_at_ms, priority: s.run.priority });
  }
  return out;
}
