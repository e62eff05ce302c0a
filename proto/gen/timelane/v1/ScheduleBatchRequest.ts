// Original file: proto/timelane/v1/timelane.proto

import type { ScheduleRequest as _timelane_v1_ScheduleRequest, ScheduleRequest__Output as _timelane_v1_ScheduleRequest__Output } from '../../timelane/v1/ScheduleRequest.js';

export interface ScheduleBatchRequest {
  'requests'?: (_timelane_v1_ScheduleRequest)[];
  'batchId'?: (string);
}

export interface ScheduleBatchRequest__Output {
  'requests': (_timelane_v1_ScheduleRequest__Output)[];
  'batchId': (string);
}
