// Original file: proto/timelane/v1/timelane.proto

import type { ScheduleResponse as _timelane_v1_ScheduleResponse, ScheduleResponse__Output as _timelane_v1_ScheduleResponse__Output } from '../../timelane/v1/ScheduleResponse.js';

export interface ScheduleBatchResponse {
  'results'?: (_timelane_v1_ScheduleResponse)[];
}

export interface ScheduleBatchResponse__Output {
  'results': (_timelane_v1_ScheduleResponse__Output)[];
}
