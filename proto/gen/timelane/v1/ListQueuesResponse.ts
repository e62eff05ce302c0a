// Original file: proto/timelane/v1/timelane.proto


export interface ListQueuesResponse {
  'queues'?: (string)[];
  'nextPageToken'?: (string);
}

export interface ListQueuesResponse__Output {
  'queues': (string)[];
  'nextPageToken': (string);
}
