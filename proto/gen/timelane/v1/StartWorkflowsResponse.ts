// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRun as _timelane_v1_WorkflowRun, WorkflowRun__Output as _timelane_v1_WorkflowRun__Output } from '../../timelane/v1/WorkflowRun.js';

export interface StartWorkflowsResponse {
  'runs'?: (_timelane_v1_WorkflowRun)[];
}

export interface StartWorkflowsResponse__Output {
  'runs': (_timelane_v1_WorkflowRun__Output)[];
}
