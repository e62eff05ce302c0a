// Original file: proto/timelane/v1/timelane.proto

import type { WorkflowStep as _timelane_v1_WorkflowStep, WorkflowStep__Output as _timelane_v1_WorkflowStep__Output } from '../../timelane/v1/WorkflowStep.js';

export interface WorkflowDefinition {
  'name'?: (string);
  'steps'?: (_timelane_v1_WorkflowStep)[];
  'maxInFlight'?: (number);
}

export interface WorkflowDefinition__Output {
  'name': (string);
  'steps': (_timelane_v1_WorkflowStep__Output)[];
  'maxInFlight': (number);
}
