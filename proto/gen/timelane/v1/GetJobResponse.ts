// Original file: proto/timelane/v1/timelane.proto

import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from '../../timelane/v1/Job.js';
import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from '../../timelane/v1/Run.js';
import type { JobCounts as _timelane_v1_JobCounts, JobCounts__Output as _timelane_v1_JobCounts__Output } from '../../timelane/v1/JobCounts.js';
import type { Long } from '@grpc/proto-loader';

export interface GetJobResponse {
  'job'?: (_timelane_v1_Job | null);
  'runs'?: (_timelane_v1_Run)[];
  'nextFireTimesMs'?: (number | string | Long)[];
  'counts'?: (_timelane_v1_JobCounts | null);
}

export interface GetJobResponse__Output {
  'job': (_timelane_v1_Job__Output | null);
  'runs': (_timelane_v1_Run__Output)[];
  'nextFireTimesMs': (string)[];
  'counts': (_timelane_v1_JobCounts__Output | null);
}
