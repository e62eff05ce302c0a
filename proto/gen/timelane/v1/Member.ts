// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface Member {
  'id'?: (string);
  'grpcAddress'?: (string);
  'ownedShards'?: (number);
  'startedAtMs'?: (number | string | Long);
  'lastSeenMs'?: (number | string | Long);
}

export interface Member__Output {
  'id': (string);
  'grpcAddress': (string);
  'ownedShards': (number);
  'startedAtMs': (string);
  'lastSeenMs': (string);
}
