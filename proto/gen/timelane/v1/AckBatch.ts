// Original file: proto/timelane/v1/timelane.proto

import type { Ack as _timelane_v1_Ack, Ack__Output as _timelane_v1_Ack__Output } from '../../timelane/v1/Ack.js';

export interface AckBatch {
  'acks'?: (_timelane_v1_Ack)[];
}

export interface AckBatch__Output {
  'acks': (_timelane_v1_Ack__Output)[];
}
