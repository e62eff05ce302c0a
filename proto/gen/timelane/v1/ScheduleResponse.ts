// Original file: proto/timelane/v1/timelane.proto

import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from '../../timelane/v1/Job.js';
import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from '../../timelane/v1/Run.js';

export interface ScheduleResponse {
  'job'?: (_timelane_v1_Job | null);
  'run'?: (_timelane_v1_Run | null);
  'deduplicated'?: (boolean);
}

export interface ScheduleResponse__Output {
  'job': (_timelane_v1_Job__Output | null);
  'run': (_timelane_v1_Run__Output | null);
  'deduplicated': (boolean);
}
