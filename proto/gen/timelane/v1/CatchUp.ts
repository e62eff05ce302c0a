// Original file: proto/timelane/v1/timelane.proto

import type { CatchUpMode as _timelane_v1_CatchUpMode, CatchUpMode__Output as _timelane_v1_CatchUpMode__Output } from '../../timelane/v1/CatchUpMode.js';
import type { Long } from '@grpc/proto-loader';

export interface CatchUp {
  'windowMs'?: (number | string | Long);
  'mode'?: (_timelane_v1_CatchUpMode);
  'maxRuns'?: (number);
}

export interface CatchUp__Output {
  'windowMs': (string);
  'mode': (_timelane_v1_CatchUpMode__Output);
  'maxRuns': (number);
}
