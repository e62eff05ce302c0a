// Original file: proto/timelane/v1/timelane.proto


export interface RetryPolicy {
  'maxAttempts'?: (number);
  'initialBackoffMs'?: (number);
  'maxBackoffMs'?: (number);
}

export interface RetryPolicy__Output {
  'maxAttempts': (number);
  'initialBackoffMs': (number);
  'maxBackoffMs': (number);
}
