// Original file: proto/timelane/v1/timelane.proto


export interface Ack {
  'runId'?: (string);
  'code'?: (number);
  'message'?: (string);
  'retryRunId'?: (string);
}

export interface Ack__Output {
  'runId': (string);
  'code': (number);
  'message': (string);
  'retryRunId': (string);
}
