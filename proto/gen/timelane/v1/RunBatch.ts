// Original file: proto/timelane/v1/timelane.proto

import type { DeliveredRun as _timelane_v1_DeliveredRun, DeliveredRun__Output as _timelane_v1_DeliveredRun__Output } from '../../timelane/v1/DeliveredRun.js';

export interface RunBatch {
  'runs'?: (_timelane_v1_DeliveredRun)[];
  'sentMonoMs'?: (number | string);
}

export interface RunBatch__Output {
  'runs': (_timelane_v1_DeliveredRun__Output)[];
  'sentMonoMs': (number);
}
