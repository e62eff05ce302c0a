// Original file: proto/timelane/v1/timelane.proto

export const DstRepeatPolicy = {
  DST_REPEAT_UNSPECIFIED: 'DST_REPEAT_UNSPECIFIED',
  DST_REPEAT_ONCE: 'DST_REPEAT_ONCE',
  DST_REPEAT_TWICE: 'DST_REPEAT_TWICE',
} as const;

export type DstRepeatPolicy =
  | 'DST_REPEAT_UNSPECIFIED'
  | 0
  | 'DST_REPEAT_ONCE'
  | 1
  | 'DST_REPEAT_TWICE'
  | 2

export type DstRepeatPolicy__Output = typeof DstRepeatPolicy[keyof typeof DstRepeatPolicy]
