// Original file: proto/timelane/v1/timelane.proto


export interface WorkflowStepDelivery {
  'workflowRunId'?: (string);
  'step'?: (string);
  'parentOutputs'?: ({[key: string]: Buffer | Uint8Array | string});
}

export interface WorkflowStepDelivery__Output {
  'workflowRunId': (string);
  'step': (string);
  'parentOutputs': ({[key: string]: Buffer});
}
