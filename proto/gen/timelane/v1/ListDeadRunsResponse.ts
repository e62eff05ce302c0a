// Original file: proto/timelane/v1/timelane.proto

import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from '../../timelane/v1/Run.js';

export interface ListDeadRunsResponse {
  'runs'?: (_timelane_v1_Run)[];
  'nextPageToken'?: (string);
}

export interface ListDeadRunsResponse__Output {
  'runs': (_timelane_v1_Run__Output)[];
  'nextPageToken': (string);
}
