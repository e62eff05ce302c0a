// Original file: proto/timelane/v1/timelane.proto


export interface GetRunRequest {
  'runId'?: (string);
}

export interface GetRunRequest__Output {
  'runId': (string);
}
