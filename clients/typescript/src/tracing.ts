/**
 * OpenTelemetry for the client and the worker: a run's trace follows it from
 * `schedule` to the worker's handler, through the daemon.
 *
 * Only `@opentelemetry/api` is used: without an SDK registered by the app
 * every span here is a no-op, and the app brings its own SDK, exporter and
 * sampler. The wire format is W3C Trace Context (`traceparent` /
 * `tracestate`), spoken here directly, so it works whatever propagator the
 * app registered (or none).
 *
 * - `schedule` / `scheduleBatch` / `scheduleRecurring` inside an active span:
 *   a CLIENT span (`timelane.schedule <queue>`, `timelane.schedule_batch`)
 *   whose context goes in the call's gRPC metadata; the daemon stores it on
 *   the one-shot runs it makes (a recurring job stores none: each of its
 *   occurrences starts a trace of its own at its claim). Outside a span
 *   nothing is sent: the library joins the app's traces, it does not start
 *   its own.
 * - a worker runs each handler inside a CONSUMER span (`timelane.run
 *   <queue>`) whose parent is the context the delivered run carries (a new
 *   trace when it carries none), and which is active while the handler runs,
 *   so the app's own spans become its children. A handler that throws ends
 *   it with an error status.
 */
import { Metadata } from '@grpc/grpc-js';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createTraceState,
  isSpanContextValid,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import type { DeliveredRunInfo } from './types.js';

const tracer = trace.getTracer('timelane');

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A W3C `traceparent` (and `tracestate`) as a remote span context, or null
 * when it is empty or not valid (version ff, all-zero ids, a version-00 value
 * with extra fields).
 */
export function parseTraceparent(traceparent: string, tracestate = ''): SpanContext | null {
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  const sc: SpanContext = { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
  if (!isSpanContextValid(sc)) return null;
  if (tracestate.trim()) sc.traceState = createTraceState(tracestate.trim());
  return sc;
}

/** A span context as W3C `traceparent` and `tracestate` text. */
export function formatTraceparent(sc: SpanContext): { traceparent: string; tracestate: string } {
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  return { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}`, tracestate: sc.traceState?.serialize() ?? '' };
}

/**
 * The context a delivered run carries, as the parent of the work done for
 * it: the root context with the run's remote span context, or the root
 * context alone when the run carries none. For apps that read runs from a
 * WorkStream themselves; createWorker's handlers already run in a child of it.
 */
export function runContext(run: Pick<DeliveredRunInfo, 'traceparent' | 'tracestate'>): Context {
  const sc = run.traceparent ? parseTraceparent(run.traceparent, run.tracestate) : null;
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/**
 * A Schedule call (`send`) in a CLIENT span, its context in the call's
 * metadata, when a span is active; otherwise `send` with empty metadata.
 * `describe` names what the call made (ids), on success.
 */
export async function traceSchedule<T>(name: string, attributes: Attributes, send: (metadata: Metadata) => Promise<T>, describe: (res: T) => Attributes): Promise<T> {
  const metadata = new Metadata();
  const active = context.active();
  const parent = trace.getSpanContext(active);
  if (!parent || !isSpanContextValid(parent)) return send(metadata);
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': 'timelane.v1.Scheduler', ...attributes } }, active);
  const carried = formatTraceparent(span.spanContext());
  metadata.set('traceparent', carried.traceparent);
  if (carried.tracestate) metadata.set('tracestate', carried.tracestate);
  try {
    const res = await send(metadata);
    span.setAttributes(describe(res));
    return res;
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs a worker's handler for `run` inside its `timelane.run <queue>`
 * CONSUMER span, a child of the run's context (runContext), active meanwhile.
 */
export function traceRun<T>(run: DeliveredRunInfo, handle: () => T | Promise<T>): Promise<T> {
  const parent = runContext(run);
  const span = tracer.startSpan(
    `timelane.run ${run.queue}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'timelane',
        'messaging.operation.type': 'process',
        'messaging.destination.name': run.queue,
        'messaging.message.id': run.runId,
        'timelane.run.id': run.runId,
        'timelane.job.id': run.jobId,
        'timelane.queue': run.queue,
        'timelane.run.attempt': run.attempt,
        'timelane.run.delivery': run.delivery,
        'timelane.run.lag_ms': run.lagMs,
      },
    },
    parent,
  );
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await handle();
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}
