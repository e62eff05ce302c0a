// Original file: proto/timelane/v1/timelane.proto

export const JobStatus = {
  JOB_STATUS_UNSPECIFIED: 'JOB_STATUS_UNSPECIFIED',
  JOB_ACTIVE: 'JOB_ACTIVE',
  JOB_COMPLETED: 'JOB_COMPLETED',
  JOB_DEAD: 'JOB_DEAD',
  JOB_CANCELLED: 'JOB_CANCELLED',
  JOB_PAUSED: 'JOB_PAUSED',
} as const;

export type JobStatus =
  | 'JOB_STATUS_UNSPECIFIED'
  | 0
  | 'JOB_ACTIVE'
  | 1
  | 'JOB_COMPLETED'
  | 2
  | 'JOB_DEAD'
  | 3
  | 'JOB_CANCELLED'
  | 4
  | 'JOB_PAUSED'
  | 5

export type JobStatus__Output = typeof JobStatus[keyof typeof JobStatus]
