// Original file: proto/timelane/v1/timelane.proto


export interface BackfillJobResponse {
  'created'?: (number);
  'alreadyExisted'?: (number);
  'occurrences'?: (number);
}

export interface BackfillJobResponse__Output {
  'created': (number);
  'alreadyExisted': (number);
  'occurrences': (number);
}
