// Original file: proto/timelane/v1/timelane.proto


export interface WorkflowRef {
  'name'?: (string);
  'version'?: (number);
}

export interface WorkflowRef__Output {
  'name': (string);
  'version': (number);
}
