// Original file: proto/timelane/v1/timelane.proto


export interface _timelane_v1_ReplayRunsResponse_Replayed {
  'deadRunId'?: (string);
  'newRunId'?: (string);
}

export interface _timelane_v1_ReplayRunsResponse_Replayed__Output {
  'deadRunId': (string);
  'newRunId': (string);
}

export interface ReplayRunsResponse {
  'replayed'?: (_timelane_v1_ReplayRunsResponse_Replayed)[];
  'skippedRunIds'?: (string)[];
}

export interface ReplayRunsResponse__Output {
  'replayed': (_timelane_v1_ReplayRunsResponse_Replayed__Output)[];
  'skippedRunIds': (string)[];
}
