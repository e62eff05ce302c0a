// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from '../../timelane/v1/RetryPolicy.js';
import type { StepTrigger as _timelane_v1_StepTrigger, StepTrigger__Output as _timelane_v1_StepTrigger__Output } from '../../timelane/v1/StepTrigger.js';

export interface WorkflowStep {
  'name'?: (string);
  'queue'?: (string);
  'payload'?: (Buffer | Uint8Array | string);
  'priority'?: (number);
  'delivery'?: (_timelane_v1_DeliveryMode);
  'retry'?: (_timelane_v1_RetryPolicy | null);
  'leaseMs'?: (number);
  'after'?: (string)[];
  'trigger'?: (_timelane_v1_StepTrigger);
}

export interface WorkflowStep__Output {
  'name': (string);
  'queue': (string);
  'payload': (Buffer);
  'priority': (number);
  'delivery': (_timelane_v1_DeliveryMode__Output);
  'retry': (_timelane_v1_RetryPolicy__Output | null);
  'leaseMs': (number);
  'after': (string)[];
  'trigger': (_timelane_v1_StepTrigger__Output);
}
