// Original file: proto/timelane/v1/timelane.proto


export interface Subscribed {
  'memberId'?: (string);
  'queues'?: (string)[];
  'maxInFlight'?: (number);
}

export interface Subscribed__Output {
  'memberId': (string);
  'queues': (string)[];
  'maxInFlight': (number);
}
