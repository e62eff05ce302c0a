// Original file: proto/timelane/v1/timelane.proto

import type { JobKind as _timelane_v1_JobKind, JobKind__Output as _timelane_v1_JobKind__Output } from '../../timelane/v1/JobKind.js';
import type { JobStatus as _timelane_v1_JobStatus, JobStatus__Output as _timelane_v1_JobStatus__Output } from '../../timelane/v1/JobStatus.js';

export interface ListJobsRequest {
  'queue'?: (string);
  'kind'?: (_timelane_v1_JobKind);
  'status'?: (_timelane_v1_JobStatus);
  'namespace'?: (string);
  'pageSize'?: (number);
  'pageToken'?: (string);
}

export interface ListJobsRequest__Output {
  'queue': (string);
  'kind': (_timelane_v1_JobKind__Output);
  'status': (_timelane_v1_JobStatus__Output);
  'namespace': (string);
  'pageSize': (number);
  'pageToken': (string);
}
