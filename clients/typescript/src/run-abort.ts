/**
 * A running handler's abort signal, made only if the handler asks for it.
 * Most handlers never read `signal`, and an AbortController per run was
 * about 4 % of a busy worker's profile samples, besides the garbage it leaves.
 *
 * States: idle → aborted (once; the first reason wins, as with
 * AbortController). The signal, whenever it is first read, agrees with that
 * state: read after an abort, it is already aborted with the same reason.
 */
export class RunAbort {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Why the run was aborted; undefined while it was not. */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
  }
}
