// Original file: proto/timelane/v1/timelane.proto

import type { ScheduledRef as _timelane_v1_ScheduledRef, ScheduledRef__Output as _timelane_v1_ScheduledRef__Output } from '../../timelane/v1/ScheduledRef.js';

export interface ScheduleBatchResponse {
  'scheduled'?: (_timelane_v1_ScheduledRef)[];
  'replayed'?: (boolean);
}

export interface ScheduleBatchResponse__Output {
  'scheduled': (_timelane_v1_ScheduledRef__Output)[];
  'replayed': (boolean);
}
