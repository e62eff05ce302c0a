// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryRef as _timelane_v1_DeliveryRef, DeliveryRef__Output as _timelane_v1_DeliveryRef__Output } from '../../timelane/v1/DeliveryRef.js';

export interface CancelRun {
  'ref'?: (_timelane_v1_DeliveryRef | null);
  'reason'?: (string);
}

export interface CancelRun__Output {
  'ref': (_timelane_v1_DeliveryRef__Output | null);
  'reason': (string);
}
