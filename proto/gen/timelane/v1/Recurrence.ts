// Original file: proto/timelane/v1/timelane.proto

import type { CronSpec as _timelane_v1_CronSpec, CronSpec__Output as _timelane_v1_CronSpec__Output } from '../../timelane/v1/CronSpec.js';
import type { IntervalSpec as _timelane_v1_IntervalSpec, IntervalSpec__Output as _timelane_v1_IntervalSpec__Output } from '../../timelane/v1/IntervalSpec.js';
import type { OverlapPolicy as _timelane_v1_OverlapPolicy, OverlapPolicy__Output as _timelane_v1_OverlapPolicy__Output } from '../../timelane/v1/OverlapPolicy.js';
import type { CatchUp as _timelane_v1_CatchUp, CatchUp__Output as _timelane_v1_CatchUp__Output } from '../../timelane/v1/CatchUp.js';
import type { Long } from '@grpc/proto-loader';

export interface Recurrence {
  'cron'?: (_timelane_v1_CronSpec | null);
  'interval'?: (_timelane_v1_IntervalSpec | null);
  'startAtMs'?: (number | string | Long);
  'endAtMs'?: (number | string | Long);
  'jitterMs'?: (number);
  'limit'?: (number);
  'overlap'?: (_timelane_v1_OverlapPolicy);
  'catchUp'?: (_timelane_v1_CatchUp | null);
  'pauseOnFailure'?: (boolean);
  'cadence'?: "cron"|"interval";
}

export interface Recurrence__Output {
  'cron'?: (_timelane_v1_CronSpec__Output | null);
  'interval'?: (_timelane_v1_IntervalSpec__Output | null);
  'startAtMs': (string);
  'endAtMs': (string);
  'jitterMs': (number);
  'limit': (number);
  'overlap': (_timelane_v1_OverlapPolicy__Output);
  'catchUp': (_timelane_v1_CatchUp__Output | null);
  'pauseOnFailure': (boolean);
  'cadence'?: "cron"|"interval";
}
