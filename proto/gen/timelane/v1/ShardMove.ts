// Original file: proto/timelane/v1/timelane.proto


export interface ShardMove {
  'shard'?: (number);
  'fromMember'?: (string);
  'toMember'?: (string);
}

export interface ShardMove__Output {
  'shard': (number);
  'fromMember': (string);
  'toMember': (string);
}
