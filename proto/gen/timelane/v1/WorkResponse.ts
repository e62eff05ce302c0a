// Original file: proto/timelane/v1/timelane.proto

import type { DeliveredRun as _timelane_v1_DeliveredRun, DeliveredRun__Output as _timelane_v1_DeliveredRun__Output } from '../../timelane/v1/DeliveredRun.js';
import type { Ack as _timelane_v1_Ack, Ack__Output as _timelane_v1_Ack__Output } from '../../timelane/v1/Ack.js';
import type { RunBatch as _timelane_v1_RunBatch, RunBatch__Output as _timelane_v1_RunBatch__Output } from '../../timelane/v1/RunBatch.js';
import type { AckBatch as _timelane_v1_AckBatch, AckBatch__Output as _timelane_v1_AckBatch__Output } from '../../timelane/v1/AckBatch.js';
import type { Subscribed as _timelane_v1_Subscribed, Subscribed__Output as _timelane_v1_Subscribed__Output } from '../../timelane/v1/Subscribed.js';
import type { CancelRun as _timelane_v1_CancelRun, CancelRun__Output as _timelane_v1_CancelRun__Output } from '../../timelane/v1/CancelRun.js';

export interface WorkResponse {
  'run'?: (_timelane_v1_DeliveredRun | null);
  'ack'?: (_timelane_v1_Ack | null);
  'runs'?: (_timelane_v1_RunBatch | null);
  'acks'?: (_timelane_v1_AckBatch | null);
  'subscribed'?: (_timelane_v1_Subscribed | null);
  'cancel'?: (_timelane_v1_CancelRun | null);
  'msg'?: "run"|"ack"|"runs"|"acks"|"subscribed"|"cancel";
}

export interface WorkResponse__Output {
  'run'?: (_timelane_v1_DeliveredRun__Output | null);
  'ack'?: (_timelane_v1_Ack__Output | null);
  'runs'?: (_timelane_v1_RunBatch__Output | null);
  'acks'?: (_timelane_v1_AckBatch__Output | null);
  'subscribed'?: (_timelane_v1_Subscribed__Output | null);
  'cancel'?: (_timelane_v1_CancelRun__Output | null);
  'msg'?: "run"|"ack"|"runs"|"acks"|"subscribed"|"cancel";
}
