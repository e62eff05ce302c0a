// Original file: proto/timelane/v1/timelane.proto

import type { DeliveryRef as _timelane_v1_DeliveryRef, DeliveryRef__Output as _timelane_v1_DeliveryRef__Output } from '../../timelane/v1/DeliveryRef.js';

export interface Complete {
  'ref'?: (_timelane_v1_DeliveryRef | null);
  'output'?: (Buffer | Uint8Array | string);
}

export interface Complete__Output {
  'ref': (_timelane_v1_DeliveryRef__Output | null);
  'output': (Buffer);
}
