// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface BackfillJobRequest {
  'jobId'?: (string);
  'fromMs'?: (number | string | Long);
  'toMs'?: (number | string | Long);
  'maxRuns'?: (number);
  'dryRun'?: (boolean);
}

export interface BackfillJobRequest__Output {
  'jobId': (string);
  'fromMs': (string);
  'toMs': (string);
  'maxRuns': (number);
  'dryRun': (boolean);
}
