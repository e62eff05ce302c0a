// Original file: proto/timelane/v1/timelane.proto

export const WorkflowRunState = {
  WORKFLOW_RUN_STATE_UNSPECIFIED: 'WORKFLOW_RUN_STATE_UNSPECIFIED',
  WORKFLOW_RUNNING: 'WORKFLOW_RUNNING',
  WORKFLOW_SUCCEEDED: 'WORKFLOW_SUCCEEDED',
  WORKFLOW_FAILED: 'WORKFLOW_FAILED',
  WORKFLOW_CANCELLED: 'WORKFLOW_CANCELLED',
} as const;

export type WorkflowRunState =
  | 'WORKFLOW_RUN_STATE_UNSPECIFIED'
  | 0
  | 'WORKFLOW_RUNNING'
  | 1
  | 'WORKFLOW_SUCCEEDED'
  | 2
  | 'WORKFLOW_FAILED'
  | 3
  | 'WORKFLOW_CANCELLED'
  | 4

export type WorkflowRunState__Output = typeof WorkflowRunState[keyof typeof WorkflowRunState]
