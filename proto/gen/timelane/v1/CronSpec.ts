// Original file: proto/timelane/v1/timelane.proto

import type { DstGapPolicy as _timelane_v1_DstGapPolicy, DstGapPolicy__Output as _timelane_v1_DstGapPolicy__Output } from '../../timelane/v1/DstGapPolicy.js';
import type { DstRepeatPolicy as _timelane_v1_DstRepeatPolicy, DstRepeatPolicy__Output as _timelane_v1_DstRepeatPolicy__Output } from '../../timelane/v1/DstRepeatPolicy.js';

export interface CronSpec {
  'expression'?: (string);
  'timeZone'?: (string);
  'dstGap'?: (_timelane_v1_DstGapPolicy);
  'dstRepeat'?: (_timelane_v1_DstRepeatPolicy);
}

export interface CronSpec__Output {
  'expression': (string);
  'timeZone': (string);
  'dstGap': (_timelane_v1_DstGapPolicy__Output);
  'dstRepeat': (_timelane_v1_DstRepeatPolicy__Output);
}
