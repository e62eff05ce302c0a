// Original file: proto/timelane/v1/timelane.proto

export const RunStatus = {
  RUN_STATUS_UNSPECIFIED: 'RUN_STATUS_UNSPECIFIED',
  RUN_SCHEDULED: 'RUN_SCHEDULED',
  RUN_FIRED: 'RUN_FIRED',
  RUN_COMPLETED: 'RUN_COMPLETED',
  RUN_FAILED: 'RUN_FAILED',
  RUN_DEAD: 'RUN_DEAD',
  RUN_CANCELLED: 'RUN_CANCELLED',
  RUN_SKIPPED: 'RUN_SKIPPED',
  RUN_BUFFERED: 'RUN_BUFFERED',
  RUN_MISSED: 'RUN_MISSED',
} as const;

export type RunStatus =
  | 'RUN_STATUS_UNSPECIFIED'
  | 0
  | 'RUN_SCHEDULED'
  | 1
  | 'RUN_FIRED'
  | 2
  | 'RUN_COMPLETED'
  | 3
  | 'RUN_FAILED'
  | 4
  | 'RUN_DEAD'
  | 5
  | 'RUN_CANCELLED'
  | 6
  | 'RUN_SKIPPED'
  | 7
  | 'RUN_BUFFERED'
  | 8
  | 'RUN_MISSED'
  | 9

export type RunStatus__Output = typeof RunStatus[keyof typeof RunStatus]
