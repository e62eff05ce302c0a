// Original file: proto/timelane/v1/timelane.proto

import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from '../../timelane/v1/Run.js';

export interface TriggerJobResponse {
  'run'?: (_timelane_v1_Run | null);
}

export interface TriggerJobResponse__Output {
  'run': (_timelane_v1_Run__Output | null);
}
