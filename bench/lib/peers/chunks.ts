/**
 * Sends jobs in due order, `size` per call, at most `parallel` calls in
 * flight — the same ingest shape for every system (the fire-lag bench sends
 * ScheduleBatch of 1000 with 4 in flight). Rejects on the first failed call,
 * after the calls already in flight have settled.
 */
import type { OnScheduled, PeerJob } from './types.js';

export async function sendInChunks(
  jobs: readonly PeerJob[],
  size: number,
  parallel: number,
  send: (chunk: readonly PeerJob[]) => Promise<void>,
  onScheduled: OnScheduled,
): Promise<void> {
  let next = 0;
  let failure: unknown;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < jobs.length) {
      const chunk = jobs.slice(next, next + size);
      next += size;
      try {
        await send(chunk);
        onScheduled(chunk, Date.now());
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, lane));
  if (failure !== undefined) throw failure;
}
