// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRunState as _timelane_v1_WorkflowRunState, WorkflowRunState__Output as _timelane_v1_WorkflowRunState__Output } from '../../timelane/v1/WorkflowRunState.js';

export interface ListWorkflowRunsRequest {
  'namespace'?: (string);
  'name'?: (string);
  'state'?: (_timelane_v1_WorkflowRunState);
  'pageSize'?: (number);
  'pageToken'?: (string);
}

export interface ListWorkflowRunsRequest__Output {
  'namespace': (string);
  'name': (string);
  'state': (_timelane_v1_WorkflowRunState__Output);
  'pageSize': (number);
  'pageToken': (string);
}
