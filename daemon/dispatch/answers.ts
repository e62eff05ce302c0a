/**
 * Worker answers: Complete, Fail, Heartbeat. Each is one conditional
 * statement on the delivery's identity (run id + fence + deliveries), so an
 * answer for a superseded delivery — redelivered, or re-claimed under a newer
 * fence — changes nothing and is refused with FAILED_PRECONDITION.
 */
import type { Db } from '../db/pool.js';
import { query } from '../db/pool.js';
import { COMPLETE_RUNS, DESCRIBE_DELIVERY, FAIL_RUN, HEARTBEAT_RUN, SELECT_RETRY_POLICY } from '../db/queries/dispatch.js';
import { failedPrecondition, notFound } from '../errors.js';
import type { DeliveryIdentity } from './delivery-hub.js';
import { backoffMs } from './backoff.js';
import type { NearDueRun } from '../slow/notifications.js';

export interface FailOutcome {
  status: 'failed' | 'dead';
  retry: NearDueRun | null;
}

export async function completeRun(db: Db, d: DeliveryIdentity): Promise<void> {
  const [err] = await completeRuns(db, [d]);
  if (err) throw err;
}

/** Completes many deliveries in one statement; per delivery, null or the refusal. */
export async function completeRuns(db: Db, ds: readonly DeliveryIdentity[]): Promise<(Error | null)[]> {
  const { rows } = await query<{ id: number; fence: number; deliveries: number }>(db, COMPLETE_RUNS, [
    ds.map((d) => d.runId),
    ds.map((d) => d.fence),
    ds.map((d) => d.deliveries),
  ]);
  // Keyed by the whole delivery: a superseded copy in the same batch is refused.
  const key = (id: number, fence: number, deliveries: number): string => `${id}:${fence}:${deliveries}`;
  const done = new Set(rows.map((r) => key(r.id, r.fence, r.deliveries)));
  return Promise.all(ds.map((d) => (done.has(key(d.runId, d.fence, d.deliveries)) ? null : refuse(db, d).catch((err: Error) => err))));
}

export async function failRun(db: Db, d: DeliveryIdentity, retryable: boolean, message: string): Promise<FailOutcome> {
  const policy = await query<{ attempt: number; max_attempts: number; initial_backoff_ms: number; max_backoff_ms: number }>(
    db,
    SELECT_RETRY_POLICY,
    [d.runId],
  );
  const p = policy.rows[0];
  if (!p) throw notFound(`run ${d.runId}`);
  const wait = backoffMs(p.attempt, { initialBackoffMs: p.initial_backoff_ms, maxBackoffMs: p.max_backoff_ms });
  const { rows } = await query<{
    status: 'failed' | 'dead';
    retry_id: number | null;
    retry_shard: number | null;
    retry_priority: number | null;
    retry_due_at_ms: number | null;
  }>(db, FAIL_RUN, [d.runId, d.fence, d.deliveries, retryable, message, wait]);
  const row = rows[0];
  if (!row) return refuse(db, d);
  const retry =
    row.retry_id !== null
      ? { runId: row.retry_id, shard: row.retry_shard ?? 0, priority: row.retry_priority ?? 0, dueAtMs: row.retry_due_at_ms ?? 0 }
      : null;
  return { status: row.status, retry };
}

export async function heartbeatRun(db: Db, d: DeliveryIdentity, progress: number | null, checkpoint: Buffer | null): Promise<number | null> {
  const { rows } = await query<{ lease_expires_at_ms: number | null }>(db, HEARTBEAT_RUN, [d.runId, d.fence, d.deliveries, progress, checkpoint]);
  if (rows.length === 0) return refuse(db, d);
  return rows[0].lease_expires_at_ms;
}

/** Explains why a delivery no longer matches, as the error the worker gets. */
async function refuse(db: Db, d: DeliveryIdentity): Promise<never> {
  const { rows } = await query<{ status: string; fence: number; deliveries: number }>(db, DESCRIBE_DELIVERY, [d.runId]);
  const now = rows[0];
  if (!now) throw notFound(`run ${d.runId}`);
  if (now.status !== 'fired') throw failedPrecondition(`run ${d.runId} is ${now.status}; the answer for delivery ${d.deliveries} (fence ${d.fence}) changes nothing`);
  throw failedPrecondition(
    `delivery superseded: run ${d.runId} is now delivery ${now.deliveries} under fence ${now.fence}, the answer was for delivery ${d.deliveries} under fence ${d.fence}`,
  );
}
