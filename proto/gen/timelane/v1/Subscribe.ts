// Original file: proto/timelane/v1/timelane.proto


export interface Subscribe {
  'queues'?: (string)[];
  'maxInFlight'?: (number);
  'workerId'?: (string);
  'batchRuns'?: (boolean);
}

export interface Subscribe__Output {
  'queues': (string)[];
  'maxInFlight': (number);
  'workerId': (string);
  'batchRuns': (boolean);
}
