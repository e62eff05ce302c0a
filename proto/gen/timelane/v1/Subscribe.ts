// Original file: proto/timelane/v1/timelane.proto


export interface Subscribe {
  'queues'?: (string)[];
  'maxInFlight'?: (number);
  'workerId'?: (string);
  'batchRuns'?: (boolean);
  'stageAheadMs'?: (number);
}

export interface Subscribe__Output {
  'queues': (string)[];
  'maxInFlight': (number);
  'workerId': (string);
  'batchRuns': (boolean);
  'stageAheadMs': (number);
}
