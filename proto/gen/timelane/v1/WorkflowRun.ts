// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowRunState as _timelane_v1_WorkflowRunState, WorkflowRunState__Output as _timelane_v1_WorkflowRunState__Output } from '../../timelane/v1/WorkflowRunState.js';
import type { Long } from '@grpc/proto-loader';

export interface WorkflowRun {
  'id'?: (string);
  'namespace'?: (string);
  'name'?: (string);
  'version'?: (number);
  'state'?: (_timelane_v1_WorkflowRunState);
  'shard'?: (number);
  'maxInFlight'?: (number);
  'startAtMs'?: (number | string | Long);
  'createdAtMs'?: (number | string | Long);
  'finishedAtMs'?: (number | string | Long);
  'retries'?: (number);
  'stepsTotal'?: (number);
  'stepsSucceeded'?: (number);
  'stepsFailed'?: (number);
}

export interface WorkflowRun__Output {
  'id': (string);
  'namespace': (string);
  'name': (string);
  'version': (number);
  'state': (_timelane_v1_WorkflowRunState__Output);
  'shard': (number);
  'maxInFlight': (number);
  'startAtMs': (string);
  'createdAtMs': (string);
  'finishedAtMs': (string);
  'retries': (number);
  'stepsTotal': (number);
  'stepsSucceeded': (number);
  'stepsFailed': (number);
}
