// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface IntervalSpec {
  'everyMs'?: (number | string | Long);
  'phaseMs'?: (number | string | Long);
}

export interface IntervalSpec__Output {
  'everyMs': (string);
  'phaseMs': (string);
}
