// Original file: proto/timelane/v1/timelane.proto

import type { RunStatus as _timelane_v1_RunStatus, RunStatus__Output as _timelane_v1_RunStatus__Output } from '../../timelane/v1/RunStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface Run {
  'id'?: (string);
  'jobId'?: (string);
  'queue'?: (string);
  'shard'?: (number);
  'attempt'?: (number);
  'status'?: (_timelane_v1_RunStatus);
  'dueAtMs'?: (number | string | Long);
  'firedAtMs'?: (number | string | Long);
  'lagMs'?: (number | string);
  'fence'?: (number | string | Long);
  'deliveries'?: (number);
  'idempotencyKey'?: (string);
  'finishedAtMs'?: (number | string | Long);
  'error'?: (string);
  'leaseExpiresAtMs'?: (number | string | Long);
  'claimedAtMs'?: (number | string | Long);
  'nominalAtMs'?: (number | string | Long);
  'origin'?: (string);
  'workerId'?: (string);
  'progress'?: (number | string);
  'replayOf'?: (string);
  'cancelRequestedAtMs'?: (number | string | Long);
}

export interface Run__Output {
  'id': (string);
  'jobId': (string);
  'queue': (string);
  'shard': (number);
  'attempt': (number);
  'status': (_timelane_v1_RunStatus__Output);
  'dueAtMs': (string);
  'firedAtMs': (string);
  'lagMs': (number);
  'fence': (string);
  'deliveries': (number);
  'idempotencyKey': (string);
  'finishedAtMs': (string);
  'error': (string);
  'leaseExpiresAtMs': (string);
  'claimedAtMs': (string);
  'nominalAtMs': (string);
  'origin': (string);
  'workerId': (string);
  'progress': (number);
  'replayOf': (string);
  'cancelRequestedAtMs': (string);
}
