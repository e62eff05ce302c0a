// Original file: proto/timelane/v1/timelane.proto

import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from '../../timelane/v1/Run.js';

export interface GetRunResponse {
  'run'?: (_timelane_v1_Run | null);
  'attempts'?: (_timelane_v1_Run)[];
}

export interface GetRunResponse__Output {
  'run': (_timelane_v1_Run__Output | null);
  'attempts': (_timelane_v1_Run__Output)[];
}
