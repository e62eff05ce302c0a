// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryRef as _timelane_v1_DeliveryRef, DeliveryRef__Output as _timelane_v1_DeliveryRef__Output } from '../../timelane/v1/DeliveryRef.js';

export interface Unstarted {
  'refs'?: (_timelane_v1_DeliveryRef)[];
}

export interface Unstarted__Output {
  'refs': (_timelane_v1_DeliveryRef__Output)[];
}
