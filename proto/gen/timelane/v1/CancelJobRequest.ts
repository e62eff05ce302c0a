// Original file: proto/timelane/v1/timelane.proto


export interface CancelJobRequest {
  'jobId'?: (string);
}

export interface CancelJobRequest__Output {
  'jobId': (string);
}
