// Original file: proto/timelane/v1/timelane.proto

import type { QueueLimits as _timelane_v1_QueueLimits, QueueLimits__Output as _timelane_v1_QueueLimits__Output } from '../../timelane/v1/QueueLimits.js';

export interface SetQueueLimitsResponse {
  'limits'?: (_timelane_v1_QueueLimits | null);
}

export interface SetQueueLimitsResponse__Output {
  'limits': (_timelane_v1_QueueLimits__Output | null);
}
