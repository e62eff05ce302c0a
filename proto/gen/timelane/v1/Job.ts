// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from '../../timelane/v1/RetryPolicy.js';
import type { JobStatus as _timelane_v1_JobStatus, JobStatus__Output as _timelane_v1_JobStatus__Output } from '../../timelane/v1/JobStatus.js';
import type { JobKind as _timelane_v1_JobKind, JobKind__Output as _timelane_v1_JobKind__Output } from '../../timelane/v1/JobKind.js';
import type { Recurrence as _timelane_v1_Recurrence, Recurrence__Output as _timelane_v1_Recurrence__Output } from '../../timelane/v1/Recurrence.js';
import type { Long } from '@grpc/proto-loader';

export interface Job {
  'id'?: (string);
  'namespace'?: (string);
  'queue'?: (string);
  'payload'?: (Buffer | Uint8Array | string);
  'priority'?: (number);
  'dedupeKey'?: (string);
  'delivery'?: (_timelane_v1_DeliveryMode);
  'retry'?: (_timelane_v1_RetryPolicy | null);
  'leaseMs'?: (number);
  'status'?: (_timelane_v1_JobStatus);
  'shard'?: (number);
  'createdAtMs'?: (number | string | Long);
  'updatedAtMs'?: (number | string | Long);
  'kind'?: (_timelane_v1_JobKind);
  'recurrence'?: (_timelane_v1_Recurrence | null);
  'nextFireAtMs'?: (number | string | Long);
  'occurrences'?: (number);
  'pauseNote'?: (string);
}

export interface Job__Output {
  'id': (string);
  'namespace': (string);
  'queue': (string);
  'payload': (Buffer);
  'priority': (number);
  'dedupeKey': (string);
  'delivery': (_timelane_v1_DeliveryMode__Output);
  'retry': (_timelane_v1_RetryPolicy__Output | null);
  'leaseMs': (number);
  'status': (_timelane_v1_JobStatus__Output);
  'shard': (number);
  'createdAtMs': (string);
  'updatedAtMs': (string);
  'kind': (_timelane_v1_JobKind__Output);
  'recurrence': (_timelane_v1_Recurrence__Output | null);
  'nextFireAtMs': (string);
  'occurrences': (number);
  'pauseNote': (string);
}
