// Original file: proto/timelane/v1/timelane.proto

import type { ShardInfo as _timelane_v1_ShardInfo, ShardInfo__Output as _timelane_v1_ShardInfo__Output } from '../../timelane/v1/ShardInfo.js';

export interface ListShardsResponse {
  'shards'?: (_timelane_v1_ShardInfo)[];
}

export interface ListShardsResponse__Output {
  'shards': (_timelane_v1_ShardInfo__Output)[];
}
