// Original file: proto/timelane/v1/timelane.proto


export interface PauseJobRequest {
  'jobId'?: (string);
  'note'?: (string);
}

export interface PauseJobRequest__Output {
  'jobId': (string);
  'note': (string);
}
