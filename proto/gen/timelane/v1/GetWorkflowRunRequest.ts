// Original file: proto/timelane/v1/timelane.proto


export interface GetWorkflowRunRequest {
  'id'?: (string);
  'includeOutputs'?: (boolean);
}

export interface GetWorkflowRunRequest__Output {
  'id': (string);
  'includeOutputs': (boolean);
}
