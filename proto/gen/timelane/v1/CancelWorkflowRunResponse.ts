// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRun as _timelane_v1_WorkflowRun, WorkflowRun__Output as _timelane_v1_WorkflowRun__Output } from '../../timelane/v1/WorkflowRun.js';

export interface CancelWorkflowRunResponse {
  'run'?: (_timelane_v1_WorkflowRun | null);
  'runsCancelled'?: (number);
  'runsCancelling'?: (number);
}

export interface CancelWorkflowRunResponse__Output {
  'run': (_timelane_v1_WorkflowRun__Output | null);
  'runsCancelled': (number);
  'runsCancelling': (number);
}
