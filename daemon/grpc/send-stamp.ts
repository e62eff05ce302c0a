/**
 * Stamps a RunBatch with the moment it left: its `sent_mono_ms`
 * (performance.now()) is written into the encoded bytes after the whole
 * batch was encoded, so a worker's transit floor (its staged runs' holds)
 * counts none of the encoding — a few milliseconds for a batch of hundreds
 * of runs, which every start would otherwise carry.
 *
 * It relies on how protobuf encodes the message: fields in field-number
 * order, so a WorkResponse holding only `runs` (field 3, a RunBatch) ends
 * with the RunBatch's last field, `sent_mono_ms` (field 2, a double: tag
 * 0x11 and 8 little-endian bytes) whenever it is set (non-zero). Anything
 * else is left as encoded.
 */
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { WorkResponse } from '../../proto/gen/timelane/v1/WorkResponse.js';

/** RunBatch.sent_mono_ms: field 2, wire type 1 (64-bit). */
const SENT_MONO_TAG = (2 << 3) | 1;

/** The Worker service with its Work responses stamped as they are encoded. */
export function stampSendTime(service: ServiceDefinition): ServiceDefinition {
  const work = service.Work;
  const encode = work.responseSerialize;
  const responseSerialize = (msg: WorkResponse): Buffer => {
    const bytes = encode(msg);
    if (msg.runs?.sentMonoMs && bytes.length >= 9 && bytes[bytes.length - 9] === SENT_MONO_TAG) bytes.writeDoubleLE(performance.now(), bytes.length - 8);
    return bytes;
  };
  return { ...service, Work: { ...work, responseSerialize } };
}
