// Original file: proto/timelane/v1/timelane.proto


export interface RetryWorkflowRunRequest {
  'id'?: (string);
  'fromSteps'?: (string)[];
}

export interface RetryWorkflowRunRequest__Output {
  'id': (string);
  'fromSteps': (string)[];
}
