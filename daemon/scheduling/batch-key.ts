/**
 * Job ids of a ScheduleBatch that names a `batch_id`.
 *
 * They are derived, not random: request k of batch (namespace, batch_id)
 * always gets the same id, so a retried batch can find what the first attempt
 * committed without storing a list per batch (the `schedule_batches` row
 * holds only the key). The id is SHA-256(namespace NUL batch_id) with k mixed
 * into its last four bytes, formatted as a version-8 (custom) UUID, so it can
 * never equal a generated (version-7) job id; distinct k give distinct ids.
 */
import { createHash } from 'node:crypto';

/** Largest batch a key can name (k must fit the four mixed bytes; batches are far smaller). */
const MAX_INDEX = 0xffff_ffff;

export function batchJobIds(namespace: string, batchId: string, count: number): string[] {
  if (count > MAX_INDEX) throw new RangeError(`batch of ${count} requests is too large to key`);
  const base = createHash('sha256').update(namespace).update('\u0000').update(batchId).digest().subarray(0, 16);
  base[6] = (base[6] & 0x0f) | 0x80; // version 8
  base[8] = (base[8] & 0x3f) | 0x80; // RFC 9562 variant
  const prefix = formatUuid(base).slice(0, 28); // xxxxxxxx-xxxx-8xxx-yxxx-xxxx: bytes 0..11
  const tail = base.readUInt32BE(12);
  const ids = new Array<string>(count);
  for (let k = 0; k < count; k++) ids[k] = prefix + ((tail ^ k) >>> 0).toString(16).padStart(8, '0');
  return ids;
}

function formatUuid(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
