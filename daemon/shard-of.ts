/**
 * A run's shard: a stable hash of its job id (FNV-1a, 32-bit) modulo the
 * cluster's shard count. Stable forever, so rebalancing moves ownership and
 * never rows.
 */
export function shardOf(jobId: string, shardCount: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) {
    h ^= jobId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % shardCount;
}
