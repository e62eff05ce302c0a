// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface DeliveryRef {
  'runId'?: (string);
  'fence'?: (number | string | Long);
  'delivery'?: (number);
}

export interface DeliveryRef__Output {
  'runId': (string);
  'fence': (string);
  'delivery': (number);
}
