// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRun as _timelane_v1_WorkflowRun, WorkflowRun__Output as _timelane_v1_WorkflowRun__Output } from '../../timelane/v1/WorkflowRun.js';

export interface RetryWorkflowRunResponse {
  'run'?: (_timelane_v1_WorkflowRun | null);
  'stepsReset'?: (string)[];
}

export interface RetryWorkflowRunResponse__Output {
  'run': (_timelane_v1_WorkflowRun__Output | null);
  'stepsReset': (string)[];
}
