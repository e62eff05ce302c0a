// Original file: proto/timelane/v1/timelane.proto

export const StepState = {
  STEP_STATE_UNSPECIFIED: 'STEP_STATE_UNSPECIFIED',
  STEP_PENDING: 'STEP_PENDING',
  STEP_READY: 'STEP_READY',
  STEP_RUNNING: 'STEP_RUNNING',
  STEP_SUCCEEDED: 'STEP_SUCCEEDED',
  STEP_FAILED: 'STEP_FAILED',
  STEP_UPSTREAM_FAILED: 'STEP_UPSTREAM_FAILED',
  STEP_CANCELLED: 'STEP_CANCELLED',
} as const;

export type StepState =
  | 'STEP_STATE_UNSPECIFIED'
  | 0
  | 'STEP_PENDING'
  | 1
  | 'STEP_READY'
  | 2
  | 'STEP_RUNNING'
  | 3
  | 'STEP_SUCCEEDED'
  | 4
  | 'STEP_FAILED'
  | 5
  | 'STEP_UPSTREAM_FAILED'
  | 6
  | 'STEP_CANCELLED'
  | 7

export type StepState__Output = typeof StepState[keyof typeof StepState]
