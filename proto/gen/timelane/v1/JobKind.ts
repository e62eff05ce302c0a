// Original file: proto/timelane/v1/timelane.proto

export const JobKind = {
  JOB_KIND_UNSPECIFIED: 'JOB_KIND_UNSPECIFIED',
  JOB_ONCE: 'JOB_ONCE',
  JOB_CRON: 'JOB_CRON',
  JOB_INTERVAL: 'JOB_INTERVAL',
} as const;

export type JobKind =
  | 'JOB_KIND_UNSPECIFIED'
  | 0
  | 'JOB_ONCE'
  | 1
  | 'JOB_CRON'
  | 2
  | 'JOB_INTERVAL'
  | 3

export type JobKind__Output = typeof JobKind[keyof typeof JobKind]
