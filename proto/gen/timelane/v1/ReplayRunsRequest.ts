// Original file: proto/timelane/v1/timelane.proto

import type { ListDeadRunsRequest as _timelane_v1_ListDeadRunsRequest, ListDeadRunsRequest__Output as _timelane_v1_ListDeadRunsRequest__Output } from '../../timelane/v1/ListDeadRunsRequest.js';

export interface ReplayRunsRequest {
  'runIds'?: (string)[];
  'filter'?: (_timelane_v1_ListDeadRunsRequest | null);
  'maxRuns'?: (number);
}

export interface ReplayRunsRequest__Output {
  'runIds': (string)[];
  'filter': (_timelane_v1_ListDeadRunsRequest__Output | null);
  'maxRuns': (number);
}
