// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface DeliveryRef {
  'runId'?: (string);
  'fence'?: (number | string | Long);
  'delivery'?: (number);
  'shard'?: (number);
  '_shard'?: "shard";
}

export interface DeliveryRef__Output {
  'runId': (string);
  'fence': (string);
  'delivery': (number);
  'shard'?: (number);
  '_shard'?: "shard";
}
