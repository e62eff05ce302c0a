// Original file: proto/timelane/v1/timelane.proto

import type { StartWorkflowRequest as _timelane_v1_StartWorkflowRequest, StartWorkflowRequest__Output as _timelane_v1_StartWorkflowRequest__Output } from '../../timelane/v1/StartWorkflowRequest.js';

export interface StartWorkflowsRequest {
  'starts'?: (_timelane_v1_StartWorkflowRequest)[];
}

export interface StartWorkflowsRequest__Output {
  'starts': (_timelane_v1_StartWorkflowRequest__Output)[];
}
