// Original file: proto/timelane/v1/timelane.proto

import type { Recurrence as _timelane_v1_Recurrence, Recurrence__Output as _timelane_v1_Recurrence__Output } from '../../timelane/v1/Recurrence.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from '../../timelane/v1/RetryPolicy.js';

export interface UpdateJobRequest {
  'jobId'?: (string);
  'recurrence'?: (_timelane_v1_Recurrence | null);
  'payload'?: (Buffer | Uint8Array | string);
  'priority'?: (number);
  'retry'?: (_timelane_v1_RetryPolicy | null);
  'leaseMs'?: (number);
  '_payload'?: "payload";
  '_priority'?: "priority";
  '_leaseMs'?: "leaseMs";
}

export interface UpdateJobRequest__Output {
  'jobId': (string);
  'recurrence': (_timelane_v1_Recurrence__Output | null);
  'payload'?: (Buffer);
  'priority'?: (number);
  'retry': (_timelane_v1_RetryPolicy__Output | null);
  'leaseMs'?: (number);
  '_payload'?: "payload";
  '_priority'?: "priority";
  '_leaseMs'?: "leaseMs";
}
