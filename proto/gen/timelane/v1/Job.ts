// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from '../../timelane/v1/RetryPolicy.js';
import type { JobStatus as _timelane_v1_JobStatus, JobStatus__Output as _timelane_v1_JobStatus__Output } from '../../timelane/v1/JobStatus.js';
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
}
