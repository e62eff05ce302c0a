// Original file: proto/timelane/v1/timelane.proto


export interface ResumeJobRequest {
  'jobId'?: (string);
  'catchUp'?: (boolean);
}

export interface ResumeJobRequest__Output {
  'jobId': (string);
  'catchUp': (boolean);
}
