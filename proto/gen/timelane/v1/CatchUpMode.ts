// Original file: proto/timelane/v1/timelane.proto

export const CatchUpMode = {
  CATCH_UP_UNSPECIFIED: 'CATCH_UP_UNSPECIFIED',
  CATCH_UP_FIRE_ALL: 'CATCH_UP_FIRE_ALL',
  CATCH_UP_FIRE_ONCE: 'CATCH_UP_FIRE_ONCE',
} as const;

export type CatchUpMode =
  | 'CATCH_UP_UNSPECIFIED'
  | 0
  | 'CATCH_UP_FIRE_ALL'
  | 1
  | 'CATCH_UP_FIRE_ONCE'
  | 2

export type CatchUpMode__Output = typeof CatchUpMode[keyof typeof CatchUpMode]
