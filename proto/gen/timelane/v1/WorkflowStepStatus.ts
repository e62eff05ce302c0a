// Original file: proto/timelane/v1/timelane.proto

import type { StepState as _timelane_v1_StepState, StepState__Output as _timelane_v1_StepState__Output } from '../../timelane/v1/StepState.js';
import type { StepTrigger as _timelane_v1_StepTrigger, StepTrigger__Output as _timelane_v1_StepTrigger__Output } from '../../timelane/v1/StepTrigger.js';
import type { Long } from '@grpc/proto-loader';

export interface WorkflowStepStatus {
  'name'?: (string);
  'state'?: (_timelane_v1_StepState);
  'after'?: (string)[];
  'queue'?: (string);
  'generation'?: (number);
  'attempts'?: (number);
  'jobId'?: (string);
  'runId'?: (string);
  'readyAtMs'?: (number | string | Long);
  'startedAtMs'?: (number | string | Long);
  'firedAtMs'?: (number | string | Long);
  'finishedAtMs'?: (number | string | Long);
  'lagMs'?: (number | string);
  'error'?: (string);
  'outputBytes'?: (number);
  'output'?: (Buffer | Uint8Array | string);
  'trigger'?: (_timelane_v1_StepTrigger);
}

export interface WorkflowStepStatus__Output {
  'name': (string);
  'state': (_timelane_v1_StepState__Output);
  'after': (string)[];
  'queue': (string);
  'generation': (number);
  'attempts': (number);
  'jobId': (string);
  'runId': (string);
  'readyAtMs': (string);
  'startedAtMs': (string);
  'firedAtMs': (string);
  'finishedAtMs': (string);
  'lagMs': (number);
  'error': (string);
  'outputBytes': (number);
  'output': (Buffer);
  'trigger': (_timelane_v1_StepTrigger__Output);
}
