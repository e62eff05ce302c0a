/**
 * What the bench's workers saw: one row per delivery, kept in columns
 * (run id, due, fired, arrived, handled — wall-clock epoch ms, the last two
 * with sub-ms precision). Rows arrive from the in-process worker or, as flat
 * number arrays, from a worker child process.
 */

/** Values per receipt in the flat wire form. */
export const RECEIPT_WIDTH = 5;

export class Receipts {
  readonly runId: number[] = [];
  readonly dueAtMs: number[] = [];
  /** The daemon's fire time (its timer), as carried by the delivery. */
  readonly firedAtMs: number[] = [];
  /** When the gRPC message was decoded by the worker's stream. */
  readonly arrivedAtMs: number[] = [];
  /** When the handler ran: the worker receipt time the lag is measured on. */
  readonly handledAtMs: number[] = [];

  get length(): number {
    return this.runId.length;
  }

  push(runId: number, dueAtMs: number, firedAtMs: number, arrivedAtMs: number, handledAtMs: number): void {
    this.runId.push(runId);
    this.dueAtMs.push(dueAtMs);
    this.firedAtMs.push(firedAtMs);
    this.arrivedAtMs.push(arrivedAtMs);
    this.handledAtMs.push(handledAtMs);
  }

  pushFlat(flat: readonly number[]): void {
    for (let i = 0; i + RECEIPT_WIDTH <= flat.length; i += RECEIPT_WIDTH) this.push(flat[i], flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4]);
  }
}
