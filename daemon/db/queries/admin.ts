/**
 * listShards — every shard with its owner, fence and earliest scheduled run.
 */
export const LIST_SHARDS = `
SELECT s.shard, s.owner, s.fence, (extract(epoch FROM s.acquired_at) * 1000)::int8 AS acquired_at_ms,
  (SELECT (extract(epoch FROM min(r.due_at)) * 1000)::int8 FROM runs r
    WHERE r.shard = s.shard AND r.status = 'scheduled') AS next_due_at_ms
FROM shards s ORDER BY s.shard`;

export interface ShardRow {
  shard: number;
  owner: string | null;
  fence: number;
  acquired_at_ms: number | null;
  next_due_at_ms: number | null;
}
