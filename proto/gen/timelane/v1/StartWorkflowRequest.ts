// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowDefinition as _timelane_v1_WorkflowDefinition, WorkflowDefinition__Output as _timelane_v1_WorkflowDefinition__Output } from '../../timelane/v1/WorkflowDefinition.js';
import type { WorkflowRef as _timelane_v1_WorkflowRef, WorkflowRef__Output as _timelane_v1_WorkflowRef__Output } from '../../timelane/v1/WorkflowRef.js';
import type { Recurrence as _timelane_v1_Recurrence, Recurrence__Output as _timelane_v1_Recurrence__Output } from '../../timelane/v1/Recurrence.js';
import type { Long } from '@grpc/proto-loader';

export interface StartWorkflowRequest {
  'namespace'?: (string);
  'inline'?: (_timelane_v1_WorkflowDefinition | null);
  'ref'?: (_timelane_v1_WorkflowRef | null);
  'atMs'?: (number | string | Long);
  'delayMs'?: (number | string | Long);
  'now'?: (boolean);
  'maxInFlight'?: (number);
  'recurrence'?: (_timelane_v1_Recurrence | null);
  'dedupeKey'?: (string);
  'definition'?: "inline"|"ref";
  'when'?: "atMs"|"delayMs"|"now"|"recurrence";
}

export interface StartWorkflowRequest__Output {
  'namespace': (string);
  'inline'?: (_timelane_v1_WorkflowDefinition__Output | null);
  'ref'?: (_timelane_v1_WorkflowRef__Output | null);
  'atMs'?: (string);
  'delayMs'?: (string);
  'now'?: (boolean);
  'maxInFlight': (number);
  'recurrence'?: (_timelane_v1_Recurrence__Output | null);
  'dedupeKey': (string);
  'definition'?: "inline"|"ref";
  'when'?: "atMs"|"delayMs"|"now"|"recurrence";
}
