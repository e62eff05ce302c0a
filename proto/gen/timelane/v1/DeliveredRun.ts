// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { WorkflowStepDelivery as _timelane_v1_WorkflowStepDelivery, WorkflowStepDelivery__Output as _timelane_v1_WorkflowStepDelivery__Output } from '../../timelane/v1/WorkflowStepDelivery.js';
import type { Long } from '@grpc/proto-loader';

export interface DeliveredRun {
  'runId'?: (string);
  'jobId'?: (string);
  'queue'?: (string);
  'attempt'?: (number);
  'payload'?: (Buffer | Uint8Array | string);
  'dueAtMs'?: (number | string | Long);
  'firedAtMs'?: (number | string | Long);
  'fence'?: (number | string | Long);
  'delivery'?: (number);
  'idempotencyKey'?: (string);
  'leaseExpiresAtMs'?: (number | string | Long);
  'mode'?: (_timelane_v1_DeliveryMode);
  'shard'?: (number);
  'claimedAtMs'?: (number | string | Long);
  'checkpoint'?: (Buffer | Uint8Array | string);
  'progress'?: (number | string);
  'nominalAtMs'?: (number | string | Long);
  'workflow'?: (_timelane_v1_WorkflowStepDelivery | null);
  'traceparent'?: (string);
  'tracestate'?: (string);
  'startMonoMs'?: (number | string);
}

export interface DeliveredRun__Output {
  'runId': (string);
  'jobId': (string);
  'queue': (string);
  'attempt': (number);
  'payload': (Buffer);
  'dueAtMs': (string);
  'firedAtMs': (string);
  'fence': (string);
  'delivery': (number);
  'idempotencyKey': (string);
  'leaseExpiresAtMs': (string);
  'mode': (_timelane_v1_DeliveryMode__Output);
  'shard': (number);
  'claimedAtMs': (string);
  'checkpoint': (Buffer);
  'progress': (number);
  'nominalAtMs': (string);
  'workflow': (_timelane_v1_WorkflowStepDelivery__Output | null);
  'traceparent': (string);
  'tracestate': (string);
  'startMonoMs': (number);
}
