/**
 * Tracing of a run's life in the daemon (OpenTelemetry), seen from the code
 * that calls it. The spans, all children of the run's trace context:
 *
 *   timelane.v1.Scheduler/Schedule|ScheduleBatch  SERVER   the call, continuing the client's context
 *   timelane.claim                                INTERNAL the fenced claim (or a redelivery) of one run
 *   timelane.deliver                              PRODUCER release → hand-out to a worker stream;
 *                                                          the worker's span is its child
 *   timelane.complete | timelane.fail             INTERNAL a worker's answer, arrival → ack
 *
 * Off unless configured (tracingEndpoint): then no OpenTelemetry SDK is
 * loaded, the daemon holds `null` instead of a RunTracing, and the fire path
 * pays nothing: the engine and the worker streams choose their callbacks
 * once, not per run. The implementation (otel-tracing.ts) is imported only
 * when tracing is on (start-tracing.ts).
 */
import type { Metadata } from '@grpc/grpc-js';
import type { Attributes } from '@opentelemetry/api';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { DeliveredRun } from '../../proto/gen/timelane/v1/DeliveredRun.js';
import type { WorkRequest__Output } from '../../proto/gen/timelane/v1/WorkRequest.js';
import type { Ack } from '../../proto/gen/timelane/v1/Ack.js';
import { traceContextOf, type TraceContext } from './trace-context.js';

export interface RunTracing {
  /**
   * A Schedule or ScheduleBatch call: its SERVER span, child of `parent` (the
   * client's context; a root without one). `body` gets the span's context,
   * to store on the runs it makes; `describe` names what it made.
   */
  serve<T>(method: string, parent: TraceContext | null, body: (store: TraceContext) => Promise<T>, describe: (res: T) => Attributes): Promise<T>;
  /**
   * A run a claim (or a redelivery) returned: its `timelane.claim` span, from
   * the claim to now. A run that carries no context gets the claim span's
   * (in memory), so its hand-out and answer join that new trace.
   */
  claimed(run: FiredRunRow, redelivery: boolean): void;
  /** The tracing of one subscribed worker stream. */
  stream(workerId: string): StreamTracing;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export interface StreamTracing {
  /** A run handed to the stream: its `timelane.deliver` span; `wire` leaves carrying that span's context. */
  delivered(run: FiredRunRow, wire: DeliveredRun, sentAtMs: number): DeliveredRun;
  /** A message from the worker: a Complete, CompleteBatch or Fail opens its answer span (one per delivery answered). */
  received(req: WorkRequest__Output): void;
  /**
   * The Ack of a Complete or Fail of this delivery (never a Heartbeat's): ends
   * its answer span. Matched by delivery, not by run: a late answer of an
   * older delivery and the current one's are two spans.
   */
  answered(runId: string, delivery: number, ack: Ack): void;
  /** The stream ended: answer spans still open end unanswered. */
  close(): void;
}

/**
 * Runs a Schedule call's `body` with the trace context its runs should carry:
 * inside the call's SERVER span when tracing is on, else the client's context
 * as it came (null: none).
 */
export function serveTraced<T>(
  tracing: RunTracing | null,
  method: string,
  metadata: Metadata,
  body: (store: TraceContext | null) => Promise<T>,
  describe: (res: T) => Attributes,
): Promise<T> {
  const parent = traceContextOf(metadata);
  return tracing ? tracing.serve(method, parent, body, describe) : body(parent);
}
