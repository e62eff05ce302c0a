/** Whole numbers for int32/uint32 wire fields, checked before the encoder sees them. */

/**
 * An optional int32 or uint32 field (0 when absent). A fraction, a string,
 * NaN or a number out of the field's range is refused here: the encoder
 * would truncate, zero or wrap it (2^32 + 15 is 15 on the wire), and the
 * daemon would act on another value than the one written.
 */
export function wholeNumber(field: string, value: number | undefined, type: 'int32' | 'uint32' = 'uint32'): number {
  if (value === undefined || value === null) return 0;
  const [min, max] = type === 'int32' ? [-0x8000_0000, 0x7fff_ffff] : [0, 0xffff_ffff];
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${field}: must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  return value;
}
