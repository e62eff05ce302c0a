// Original file: proto/timelane/v1/timelane.proto

import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from '../../timelane/v1/Job.js';

export interface UpdateJobResponse {
  'job'?: (_timelane_v1_Job | null);
}

export interface UpdateJobResponse__Output {
  'job': (_timelane_v1_Job__Output | null);
}
