// Original file: proto/timelane/v1/timelane.proto

export const DeliveryMode = {
  DELIVERY_MODE_UNSPECIFIED: 'DELIVERY_MODE_UNSPECIFIED',
  AT_LEAST_ONCE: 'AT_LEAST_ONCE',
  AT_MOST_ONCE: 'AT_MOST_ONCE',
} as const;

export type DeliveryMode =
  | 'DELIVERY_MODE_UNSPECIFIED'
  | 0
  | 'AT_LEAST_ONCE'
  | 1
  | 'AT_MOST_ONCE'
  | 2

export type DeliveryMode__Output = typeof DeliveryMode[keyof typeof DeliveryMode]
