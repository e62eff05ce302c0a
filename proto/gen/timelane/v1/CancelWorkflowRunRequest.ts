// Original file: proto/timelane/v1/timelane.proto


export interface CancelWorkflowRunRequest {
  'id'?: (string);
}

export interface CancelWorkflowRunRequest__Output {
  'id': (string);
}
