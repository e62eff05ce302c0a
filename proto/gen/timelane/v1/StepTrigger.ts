// Original file: proto/timelane/v1/timelane.proto

export const StepTrigger = {
  STEP_TRIGGER_UNSPECIFIED: 'STEP_TRIGGER_UNSPECIFIED',
  TRIGGER_ALL_SUCCESS: 'TRIGGER_ALL_SUCCESS',
  TRIGGER_ALL_DONE: 'TRIGGER_ALL_DONE',
} as const;

export type StepTrigger =
  | 'STEP_TRIGGER_UNSPECIFIED'
  | 0
  | 'TRIGGER_ALL_SUCCESS'
  | 1
  | 'TRIGGER_ALL_DONE'
  | 2

export type StepTrigger__Output = typeof StepTrigger[keyof typeof StepTrigger]
