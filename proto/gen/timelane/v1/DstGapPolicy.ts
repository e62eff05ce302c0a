// Original file: proto/timelane/v1/timelane.proto

export const DstGapPolicy = {
  DST_GAP_UNSPECIFIED: 'DST_GAP_UNSPECIFIED',
  DST_GAP_SHIFT: 'DST_GAP_SHIFT',
  DST_GAP_SKIP: 'DST_GAP_SKIP',
} as const;

export type DstGapPolicy =
  | 'DST_GAP_UNSPECIFIED'
  | 0
  | 'DST_GAP_SHIFT'
  | 1
  | 'DST_GAP_SKIP'
  | 2

export type DstGapPolicy__Output = typeof DstGapPolicy[keyof typeof DstGapPolicy]
