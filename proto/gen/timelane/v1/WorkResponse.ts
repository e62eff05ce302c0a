// Original file: proto/timelane/v1/timelane.proto

import type { DeliveredRun as _timelane_v1_DeliveredRun, DeliveredRun__Output as _timelane_v1_DeliveredRun__Output } from '../../timelane/v1/DeliveredRun.js';
import type { Ack as _timelane_v1_Ack, Ack__Output as _timelane_v1_Ack__Output } from '../../timelane/v1/Ack.js';

export interface WorkResponse {
  'run'?: (_timelane_v1_DeliveredRun | null);
  'ack'?: (_timelane_v1_Ack | null);
  'msg'?: "run"|"ack";
}

export interface WorkResponse__Output {
  'run'?: (_timelane_v1_DeliveredRun__Output | null);
  'ack'?: (_timelane_v1_Ack__Output | null);
  'msg'?: "run"|"ack";
}
