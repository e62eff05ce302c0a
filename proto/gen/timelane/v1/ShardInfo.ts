// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface ShardInfo {
  'shard'?: (number);
  'owner'?: (string);
  'fence'?: (number | string | Long);
  'runsInWindow'?: (number);
  'nextDueAtMs'?: (number | string | Long);
  'acquiredAtMs'?: (number | string | Long);
  'ownedHere'?: (boolean);
  'leaseAgeMs'?: (number | string | Long);
  'lagMs'?: (number | string);
  'assignedTo'?: (string);
}

export interface ShardInfo__Output {
  'shard': (number);
  'owner': (string);
  'fence': (string);
  'runsInWindow': (number);
  'nextDueAtMs': (string);
  'acquiredAtMs': (string);
  'ownedHere': (boolean);
  'leaseAgeMs': (string);
  'lagMs': (number);
  'assignedTo': (string);
}
