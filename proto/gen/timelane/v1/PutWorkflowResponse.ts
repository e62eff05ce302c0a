// Original file: proto/timelane/v1/timelane.proto


export interface PutWorkflowResponse {
  'name'?: (string);
  'version'?: (number);
  'unchanged'?: (boolean);
}

export interface PutWorkflowResponse__Output {
  'name': (string);
  'version': (number);
  'unchanged': (boolean);
}
