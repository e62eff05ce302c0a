// Original file: proto/timelane/v1/timelane.proto

import type { RunStatus as _timelane_v1_RunStatus, RunStatus__Output as _timelane_v1_RunStatus__Output } from '../../timelane/v1/RunStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface ListRunsRequest {
  'jobId'?: (string);
  'queue'?: (string);
  'status'?: (_timelane_v1_RunStatus);
  'pageSize'?: (number);
  'pageToken'?: (string);
  'dueFromMs'?: (number | string | Long);
  'dueToMs'?: (number | string | Long);
}

export interface ListRunsRequest__Output {
  'jobId': (string);
  'queue': (string);
  'status': (_timelane_v1_RunStatus__Output);
  'pageSize': (number);
  'pageToken': (string);
  'dueFromMs': (string);
  'dueToMs': (string);
}
