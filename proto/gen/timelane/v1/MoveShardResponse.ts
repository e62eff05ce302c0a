// Original file: proto/timelane/v1/timelane.proto

import type { ShardMove as _timelane_v1_ShardMove, ShardMove__Output as _timelane_v1_ShardMove__Output } from '../../timelane/v1/ShardMove.js';

export interface MoveShardResponse {
  'move'?: (_timelane_v1_ShardMove | null);
  'handoffMs'?: (number | string);
}

export interface MoveShardResponse__Output {
  'move': (_timelane_v1_ShardMove__Output | null);
  'handoffMs': (number);
}
