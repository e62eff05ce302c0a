/**
 * The server's own deadline for unary calls: a call whose client set none
 * (or a longer one) is answered DEADLINE_EXCEEDED after this long, so no
 * caller waits forever on a handler stuck behind, say, a lock. As with a
 * client deadline, a write may still complete after the answer: retry with
 * the same dedupe key or batch id.
 */
import { Metadata, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';

/** Scheduler and Workflows calls. */
export const API_DEADLINE_MS = 60_000;
/** Admin calls (a drain or a move may be given up to 300 s). */
export const ADMIN_DEADLINE_MS = 330_000;

/** The callback to answer with: the first of the handler's answer and the deadline's. */
export function withServerDeadline<Req, Res>(call: ServerUnaryCall<Req, Res>, cb: sendUnaryData<Res>, ms: number): sendUnaryData<Res> {
  let answered = false;
  const timer = setTimeout(() => {
    if (answered || call.cancelled) return;
    answered = true;
    cb({ code: status.DEADLINE_EXCEEDED, details: `the server's deadline (${ms} ms) passed before the call was done`, metadata: new Metadata() });
  }, ms);
  timer.unref();
  return (err, value) => {
    clearTimeout(timer);
    if (answered) return;
    answered = true;
    cb(err, value);
  };
}
