// Original file: proto/timelane/v1/timelane.proto


export interface GetJobRequest {
  'jobId'?: (string);
}

export interface GetJobRequest__Output {
  'jobId': (string);
}
