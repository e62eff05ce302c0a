// Original file: proto/timelane/v1/timelane.proto


export interface ListQueuesRequest {
  'pageSize'?: (number);
  'pageToken'?: (string);
}

export interface ListQueuesRequest__Output {
  'pageSize': (number);
  'pageToken': (string);
}
