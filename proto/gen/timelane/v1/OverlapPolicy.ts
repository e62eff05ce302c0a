// Original file: proto/timelane/v1/timelane.proto

export const OverlapPolicy = {
  OVERLAP_UNSPECIFIED: 'OVERLAP_UNSPECIFIED',
  OVERLAP_SKIP: 'OVERLAP_SKIP',
  OVERLAP_BUFFER_ONE: 'OVERLAP_BUFFER_ONE',
  OVERLAP_BUFFER_ALL: 'OVERLAP_BUFFER_ALL',
  OVERLAP_CANCEL_OTHER: 'OVERLAP_CANCEL_OTHER',
  OVERLAP_ALLOW_ALL: 'OVERLAP_ALLOW_ALL',
} as const;

export type OverlapPolicy =
  | 'OVERLAP_UNSPECIFIED'
  | 0
  | 'OVERLAP_SKIP'
  | 1
  | 'OVERLAP_BUFFER_ONE'
  | 2
  | 'OVERLAP_BUFFER_ALL'
  | 3
  | 'OVERLAP_CANCEL_OTHER'
  | 4
  | 'OVERLAP_ALLOW_ALL'
  | 5

export type OverlapPolicy__Output = typeof OverlapPolicy[keyof typeof OverlapPolicy]
