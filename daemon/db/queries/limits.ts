/* Per-queue delivery limits (table queue_limits, migration 0007). */

export interface QueueLimitsRow {
  queue: string;
  max_in_flight: number;
  max_per_second: number;
}

/** listQueueLimits — every limited queue. */
export const LIST_QUEUE_LIMITS = `SELECT queue, max_in_flight, max_per_second FROM queue_limits ORDER BY queue`;

/** setQueueLimits — upsert a queue's limits. $1 queue, $2 max in flight, $3 max per second. */
export const SET_QUEUE_LIMITS = `
INSERT INTO queue_limits (queue, max_in_flight, max_per_second) VALUES ($1, $2, $3)
ON CONFLICT (queue) DO UPDATE SET max_in_flight = $2, max_per_second = $3, updated_at = now()
RETURNING queue, max_in_flight, max_per_second`;

/** clearQueueLimits — a queue is no longer limited. $1 queue. */
export const CLEAR_QUEUE_LIMITS = `DELETE FROM queue_limits WHERE queue = $1`;
