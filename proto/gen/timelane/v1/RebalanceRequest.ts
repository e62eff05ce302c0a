// Original file: proto/timelane/v1/timelane.proto


export interface RebalanceRequest {
  'dryRun'?: (boolean);
  'timeoutMs'?: (number);
}

export interface RebalanceRequest__Output {
  'dryRun': (boolean);
  'timeoutMs': (number);
}
