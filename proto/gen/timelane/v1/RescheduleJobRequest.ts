// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface RescheduleJobRequest {
  'jobId'?: (string);
  'atMs'?: (number | string | Long);
  'delayMs'?: (number | string | Long);
  'now'?: (boolean);
  'when'?: "atMs"|"delayMs"|"now";
}

export interface RescheduleJobRequest__Output {
  'jobId': (string);
  'atMs'?: (string);
  'delayMs'?: (string);
  'now'?: (boolean);
  'when'?: "atMs"|"delayMs"|"now";
}
