// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from '../../timelane/v1/RetryPolicy.js';
import type { Recurrence as _timelane_v1_Recurrence, Recurrence__Output as _timelane_v1_Recurrence__Output } from '../../timelane/v1/Recurrence.js';
import type { Long } from '@grpc/proto-loader';

export interface ScheduleRequest {
  'namespace'?: (string);
  'queue'?: (string);
  'payload'?: (Buffer | Uint8Array | string);
  'atMs'?: (number | string | Long);
  'delayMs'?: (number | string | Long);
  'now'?: (boolean);
  'priority'?: (number);
  'dedupeKey'?: (string);
  'delivery'?: (_timelane_v1_DeliveryMode);
  'retry'?: (_timelane_v1_RetryPolicy | null);
  'leaseMs'?: (number);
  'recurrence'?: (_timelane_v1_Recurrence | null);
  'when'?: "atMs"|"delayMs"|"now"|"recurrence";
}

export interface ScheduleRequest__Output {
  'namespace': (string);
  'queue': (string);
  'payload': (Buffer);
  'atMs'?: (string);
  'delayMs'?: (string);
  'now'?: (boolean);
  'priority': (number);
  'dedupeKey': (string);
  'delivery': (_timelane_v1_DeliveryMode__Output);
  'retry': (_timelane_v1_RetryPolicy__Output | null);
  'leaseMs': (number);
  'recurrence'?: (_timelane_v1_Recurrence__Output | null);
  'when'?: "atMs"|"delayMs"|"now"|"recurrence";
}
