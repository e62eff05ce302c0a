// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRun as _timelane_v1_WorkflowRun, WorkflowRun__Output as _timelane_v1_WorkflowRun__Output } from '../../timelane/v1/WorkflowRun.js';
import type { WorkflowStepStatus as _timelane_v1_WorkflowStepStatus, WorkflowStepStatus__Output as _timelane_v1_WorkflowStepStatus__Output } from '../../timelane/v1/WorkflowStepStatus.js';

export interface GetWorkflowRunResponse {
  'run'?: (_timelane_v1_WorkflowRun | null);
  'steps'?: (_timelane_v1_WorkflowStepStatus)[];
}

export interface GetWorkflowRunResponse__Output {
  'run': (_timelane_v1_WorkflowRun__Output | null);
  'steps': (_timelane_v1_WorkflowStepStatus__Output)[];
}
