// Original file: proto/timelane/v1/timelane.proto


export interface MoveShardRequest {
  'shard'?: (number);
  'toMember'?: (string);
  'timeoutMs'?: (number);
}

export interface MoveShardRequest__Output {
  'shard': (number);
  'toMember': (string);
  'timeoutMs': (number);
}
