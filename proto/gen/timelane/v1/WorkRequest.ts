// Original file: proto/timelane/v1/timelane.proto

import type { Subscribe as _timelane_v1_Subscribe, Subscribe__Output as _timelane_v1_Subscribe__Output } from '../../timelane/v1/Subscribe.js';
import type { Complete as _timelane_v1_Complete, Complete__Output as _timelane_v1_Complete__Output } from '../../timelane/v1/Complete.js';
import type { Fail as _timelane_v1_Fail, Fail__Output as _timelane_v1_Fail__Output } from '../../timelane/v1/Fail.js';
import type { Heartbeat as _timelane_v1_Heartbeat, Heartbeat__Output as _timelane_v1_Heartbeat__Output } from '../../timelane/v1/Heartbeat.js';
import type { CompleteBatch as _timelane_v1_CompleteBatch, CompleteBatch__Output as _timelane_v1_CompleteBatch__Output } from '../../timelane/v1/CompleteBatch.js';
import type { Drain as _timelane_v1_Drain, Drain__Output as _timelane_v1_Drain__Output } from '../../timelane/v1/Drain.js';
import type { Unstarted as _timelane_v1_Unstarted, Unstarted__Output as _timelane_v1_Unstarted__Output } from '../../timelane/v1/Unstarted.js';

export interface WorkRequest {
  'subscribe'?: (_timelane_v1_Subscribe | null);
  'complete'?: (_timelane_v1_Complete | null);
  'fail'?: (_timelane_v1_Fail | null);
  'heartbeat'?: (_timelane_v1_Heartbeat | null);
  'completes'?: (_timelane_v1_CompleteBatch | null);
  'drain'?: (_timelane_v1_Drain | null);
  'unstarted'?: (_timelane_v1_Unstarted | null);
  'msg'?: "subscribe"|"complete"|"fail"|"heartbeat"|"completes"|"drain"|"unstarted";
}

export interface WorkRequest__Output {
  'subscribe'?: (_timelane_v1_Subscribe__Output | null);
  'complete'?: (_timelane_v1_Complete__Output | null);
  'fail'?: (_timelane_v1_Fail__Output | null);
  'heartbeat'?: (_timelane_v1_Heartbeat__Output | null);
  'completes'?: (_timelane_v1_CompleteBatch__Output | null);
  'drain'?: (_timelane_v1_Drain__Output | null);
  'unstarted'?: (_timelane_v1_Unstarted__Output | null);
  'msg'?: "subscribe"|"complete"|"fail"|"heartbeat"|"completes"|"drain"|"unstarted";
}
