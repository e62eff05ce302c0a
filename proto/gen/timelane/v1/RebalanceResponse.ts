// Original file: proto/timelane/v1/timelane.proto

import type { ShardMove as _timelane_v1_ShardMove, ShardMove__Output as _timelane_v1_ShardMove__Output } from '../../timelane/v1/ShardMove.js';

export interface RebalanceResponse {
  'moves'?: (_timelane_v1_ShardMove)[];
  'executed'?: (boolean);
  'completed'?: (boolean);
  'shardsPerMember'?: ({[key: string]: number});
}

export interface RebalanceResponse__Output {
  'moves': (_timelane_v1_ShardMove__Output)[];
  'executed': (boolean);
  'completed': (boolean);
  'shardsPerMember': ({[key: string]: number});
}
