// Original file: proto/timelane/v1/timelane.proto

import type { RunStatus as _timelane_v1_RunStatus, RunStatus__Output as _timelane_v1_RunStatus__Output } from '../../timelane/v1/RunStatus.js';
import type { DeliveryMode as _timelane_v1_DeliveryMode, DeliveryMode__Output as _timelane_v1_DeliveryMode__Output } from '../../timelane/v1/DeliveryMode.js';
import type { Long } from '@grpc/proto-loader';

export interface ScheduledRef {
  'jobId'?: (string);
  'runId'?: (string);
  'shard'?: (number);
  'dueAtMs'?: (number | string | Long);
  'status'?: (_timelane_v1_RunStatus);
  'delivery'?: (_timelane_v1_DeliveryMode);
  'deduplicated'?: (boolean);
}

export interface ScheduledRef__Output {
  'jobId': (string);
  'runId': (string);
  'shard': (number);
  'dueAtMs': (string);
  'status': (_timelane_v1_RunStatus__Output);
  'delivery': (_timelane_v1_DeliveryMode__Output);
  'deduplicated': (boolean);
}
