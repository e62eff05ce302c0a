// Original file: proto/timelane/v1/timelane.proto

import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from '../../timelane/v1/Job.js';

export interface ListJobsResponse {
  'jobs'?: (_timelane_v1_Job)[];
  'nextPageToken'?: (string);
}

export interface ListJobsResponse__Output {
  'jobs': (_timelane_v1_Job__Output)[];
  'nextPageToken': (string);
}
