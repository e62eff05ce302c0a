/**
 * The two references the fire path passes around, defined once.
 *
 * - RunRef: a scheduled run as the window knows it before the claim — enough
 *   to place it in the heap, route it to its shard's owner and claim it.
 * - DeliveryRef: one hand-out of a fired run — what an answer must echo, so
 *   an answer for a superseded delivery changes nothing.
 * - HandOff: a DeliveryRef with when it was handed to a worker stream, which
 *   every write that records `fired_at` needs.
 */

export interface RunRef {
  runId: number;
  shard: number;
  /** Wall-clock epoch ms. */
  dueAtMs: number;
  priority: number;
}

export interface DeliveryRef {
  runId: number;
  /** The run's shard; null when the answer did not say (the daemon looks it up). */
  shard: number | null;
  fence: number;
  deliveries: number;
}

/** A hand-out and when it reached a worker stream (null: not known to this daemon, or never sent). */
export interface HandOff extends DeliveryRef {
  sentAtMs: number | null;
}

/** A hand-off whose shard is known: every one this daemon made itself. */
export interface KnownHandOff extends HandOff {
  shard: number;
}

/** The row shape every window/status query returns for a scheduled run. */
export interface RunRefRow {
  id: number;
  shard: number;
  priority: number;
  due_at_ms: number;
}

export function runRefOf(row: RunRefRow): RunRef {
  return { runId: row.id, shard: row.shard, dueAtMs: row.due_at_ms, priority: row.priority };
}

/** Same delivery (run, fence, hand-out number)? */
export function sameDelivery(a: Omit<DeliveryRef, 'shard'>, b: Omit<DeliveryRef, 'shard'>): boolean {
  return a.runId === b.runId && a.fence === b.fence && a.deliveries === b.deliveries;
}
