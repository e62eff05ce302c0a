// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface JobCounts {
  'fired'?: (number | string | Long);
  'completed'?: (number | string | Long);
  'dead'?: (number | string | Long);
  'skipped'?: (number | string | Long);
  'missed'?: (number | string | Long);
  'scheduled'?: (number | string | Long);
}

export interface JobCounts__Output {
  'fired': (string);
  'completed': (string);
  'dead': (string);
  'skipped': (string);
  'missed': (string);
  'scheduled': (string);
}
