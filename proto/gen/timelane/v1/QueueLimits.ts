// Original file: proto/timelane/v1/timelane.proto


export interface QueueLimits {
  'queue'?: (string);
  'maxInFlight'?: (number);
  'maxPerSecond'?: (number);
}

export interface QueueLimits__Output {
  'queue': (string);
  'maxInFlight': (number);
  'maxPerSecond': (number);
}
