// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowDefinition as _timelane_v1_WorkflowDefinition, WorkflowDefinition__Output as _timelane_v1_WorkflowDefinition__Output } from '../../timelane/v1/WorkflowDefinition.js';

export interface PutWorkflowRequest {
  'namespace'?: (string);
  'definition'?: (_timelane_v1_WorkflowDefinition | null);
}

export interface PutWorkflowRequest__Output {
  'namespace': (string);
  'definition': (_timelane_v1_WorkflowDefinition__Output | null);
}
