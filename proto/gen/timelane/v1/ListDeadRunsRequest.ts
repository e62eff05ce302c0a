// Original file: proto/timelane/v1/timelane.proto

import type { Long } from '@grpc/proto-loader';

export interface ListDeadRunsRequest {
  'queue'?: (string);
  'jobId'?: (string);
  'sinceMs'?: (number | string | Long);
  'untilMs'?: (number | string | Long);
  'errorContains'?: (string);
  'pageSize'?: (number);
  'pageToken'?: (string);
}

export interface ListDeadRunsRequest__Output {
  'queue': (string);
  'jobId': (string);
  'sinceMs': (string);
  'untilMs': (string);
  'errorContains': (string);
  'pageSize': (number);
  'pageToken': (string);
}
