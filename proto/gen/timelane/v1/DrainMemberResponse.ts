// Original file: proto/timelane/v1/timelane.proto

import type { ShardMove as _timelane_v1_ShardMove, ShardMove__Output as _timelane_v1_ShardMove__Output } from '../../timelane/v1/ShardMove.js';

export interface DrainMemberResponse {
  'moves'?: (_timelane_v1_ShardMove)[];
  'completed'?: (boolean);
}

export interface DrainMemberResponse__Output {
  'moves': (_timelane_v1_ShardMove__Output)[];
  'completed': (boolean);
}
