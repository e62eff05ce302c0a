// Original file: proto/timelane/v1/timelane.proto


export interface TriggerJobRequest {
  'jobId'?: (string);
  'overrideOverlap'?: (boolean);
}

export interface TriggerJobRequest__Output {
  'jobId': (string);
  'overrideOverlap': (boolean);
}
