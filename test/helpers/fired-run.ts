import type { FiredRunRow } from '../../daemon/db/queries/columns.js';

/** A fired run as the claim returns it, for unit tests of what consumes one; `over` replaces fields. */
export function firedRunRow(id: number, over: Partial<FiredRunRow> = {}): FiredRunRow {
  return {
    id,
    job_id: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
    shard: 0,
    queue: 'q',
    priority: 0,
    attempt: 1,
    due_at_ms: 1_700_000_000_000,
    claimed_at_ms: 1_700_000_000_001,
    fence: 1,
    deliveries: 1,
    lease_expires_at_ms: 1_700_000_030_001,
    nominal_at_ms: null,
    origin: null,
    progress: null,
    checkpoint: null,
    idempotency_key: `k${id}`,
    payload: Buffer.from('p'),
    job_namespace: 'default',
    delivery: 'at_least_once',
    ...over,
  };
}
