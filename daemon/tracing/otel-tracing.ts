/**
 * The daemon's tracing with the OpenTelemetry SDK: spans batched and exported
 * over OTLP/HTTP (JSON). Imported by run-tracing.ts only when tracing is
 * configured. See run-tracing.ts for the spans and what calls them.
 *
 * Every span has an explicit parent, the run's trace context as text (the
 * daemon registers no global provider or context manager: a run's trace
 * crosses processes and timers, never an async call stack here). Sampling is
 * the SDK's, from OTEL_TRACES_SAMPLER (default parentbased_always_on): a run
 * whose client's span was not sampled records no span here either.
 *
 * A stream's tracing keeps, per run handed out on the stream, the run's
 * context (for the answer's span) until the run is answered there, and per
 * answer not yet acked, its span; both are dropped when the stream ends. A
 * run never answered on the stream (redelivered elsewhere after its lease)
 * keeps its entry until then: a long-lived stream whose runs keep timing
 * out grows by one small entry per such run.
 */
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  createTraceState,
  diag,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { Logger } from '../log.js';
import type { RunTracing, StreamTracing } from './run-tracing.js';
import { formatTraceparent, type TraceContext } from './trace-context.js';

export interface OtelTracingOptions {
  /** OTLP/HTTP traces URL; undefined: the exporter's own (OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string | undefined;
  memberId: string;
  log: Logger;
}

const TRACER_NAME = 'timelane';

export function createOtelTracing(opts: OtelTracingOptions): RunTracing {
  const { log } = opts;
  // The SDK's own troubles (an unreachable collector) go to our log, not to nowhere.
  diag.setLogger(
    {
      error: (msg, ...args) => log.warn({ otel: args.map(String) }, `OpenTelemetry: ${msg}`),
      warn: (msg, ...args) => log.warn({ otel: args.map(String) }, `OpenTelemetry: ${msg}`),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const resource = resourceFromAttributes({
    'service.name': process.env.OTEL_SERVICE_NAME || 'timelane',
    'service.instance.id': opts.memberId,
  }).merge(detectResources({ detectors: [envDetector] }));
  const exporter = new OTLPTraceExporter(opts.url === undefined ? {} : { url: opts.url });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  const tracer = provider.getTracer(TRACER_NAME);
  log.info({ otlpTracesEndpoint: opts.url ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'exporting traces (OpenTelemetry, OTLP/HTTP)');

  return {
    async serve(method, parent, body, describe) {
      const span = tracer.startSpan(
        `timelane.v1.Scheduler/${method}`,
        { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.service': 'timelane.v1.Scheduler', 'rpc.method': method } },
        contextOf(parent),
      );
      try {
        const res = await body(textOf(span));
        span.setAttributes(describe(res));
        return res;
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },

    claimed(run, redelivery) {
      const span = tracer.startSpan(
        'timelane.claim',
        {
          kind: SpanKind.INTERNAL,
          startTime: new Date(run.claimed_at_ms ?? Date.now()),
          attributes: {
            ...runAttributes(run),
            'timelane.shard': run.shard,
            'timelane.fence': run.fence,
            'timelane.run.due_at_ms': run.due_at_ms,
            'timelane.delivery_mode': run.delivery,
            'timelane.claim.redelivery': redelivery,
          },
        },
        contextOf(run.traceparent ? { traceparent: run.traceparent, tracestate: run.tracestate ?? null } : null),
      );
      if (!run.traceparent) {
        const own = textOf(span);
        run.traceparent = own.traceparent;
        run.tracestate = own.tracestate;
      }
      span.end();
    },

    stream: (workerId) => streamTracing(tracer, workerId),

    async shutdown() {
      await provider.shutdown().catch((err: unknown) => log.warn({ err: String(err) }, 'could not export the last spans'));
    },
  };
}

function streamTracing(tracer: Tracer, workerId: string): StreamTracing {
  // Keyed by delivery ("run:delivery"), not by run: two deliveries of one run can be answered on one stream (a
  // handler past its lease, and its redelivery), and each answer is its own span.
  /** Delivery → the run's context, for the span of its answer. */
  const inFlight = new Map<string, Context>();
  /** Delivery → the span of its answer, until its ack. */
  const answering = new Map<string, Span>();
  const key = (runId: string, delivery: number | undefined): string => `${runId}:${delivery ?? 0}`;
  /** Deliveries never answered on this stream (their lease ran out, redelivered elsewhere) would stay: the oldest go past this. */
  const MAX_REMEMBERED = 20_000;

  const open = (runId: string, delivery: number, name: string, attributes: Attributes): void => {
    const k = key(runId, delivery);
    const parent = inFlight.get(k);
    if (parent === undefined) return; // not delivered on this stream (a reconnect): its context is unknown here
    inFlight.delete(k);
    answering.get(k)?.end();
    answering.set(k, tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: { 'timelane.run.id': runId, 'timelane.worker.id': workerId, 'timelane.run.delivery': delivery, ...attributes } }, parent));
  };

  return {
    delivered(run, wire, sentAtMs) {
      const parent = contextOf(run.traceparent ? { traceparent: run.traceparent, tracestate: run.tracestate ?? null } : null);
      inFlight.set(key(wire.runId ?? String(run.id), wire.delivery), parent);
      if (inFlight.size > MAX_REMEMBERED) inFlight.delete(inFlight.keys().next().value!);
      // From its release (its due time, or its claim if that was later) to the hand-out: the wait for credit.
      const releasedAt = Math.min(sentAtMs, Math.max(run.due_at_ms, run.claimed_at_ms ?? 0));
      const span = tracer.startSpan(
        'timelane.deliver',
        {
          kind: SpanKind.PRODUCER,
          startTime: new Date(releasedAt),
          attributes: {
            ...runAttributes(run),
            'messaging.system': 'timelane',
            'messaging.operation.type': 'send',
            'messaging.destination.name': wire.queue ?? run.queue,
            'timelane.worker.id': workerId,
            'timelane.run.lag_ms': sentAtMs - run.due_at_ms,
          },
        },
        parent,
      );
      const own = textOf(span);
      wire.traceparent = own.traceparent;
      wire.tracestate = own.tracestate ?? '';
      span.end(new Date(sentAtMs));
      return wire;
    },

    received(req) {
      switch (req.msg) {
        case 'complete':
          if (req.complete?.ref) open(req.complete.ref.runId, req.complete.ref.delivery, 'timelane.complete', {});
          return;
        case 'completes':
          for (const ref of req.completes?.refs ?? []) open(ref.runId, ref.delivery, 'timelane.complete', { 'timelane.complete.batch_size': req.completes?.refs.length ?? 0 });
          return;
        case 'fail':
          if (req.fail?.ref) open(req.fail.ref.runId, req.fail.ref.delivery, 'timelane.fail', { 'timelane.fail.retryable': req.fail.retryable, 'timelane.fail.message': req.fail.message.slice(0, 256) });
          return;
        default:
      }
    },

    answered(runId, delivery, a) {
      const k = key(runId, delivery);
      const span = answering.get(k);
      if (!span) return;
      answering.delete(k);
      span.setAttribute('rpc.grpc.status_code', a.code ?? 0);
      if (a.retryRunId) span.setAttribute('timelane.retry_run.id', a.retryRunId);
      if (a.code) span.setStatus({ code: SpanStatusCode.ERROR, message: a.message ?? '' });
      span.end();
    },

    close() {
      for (const span of answering.values()) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the worker stream ended before the answer was acked' });
        span.end();
      }
      answering.clear();
      inFlight.clear();
    },
  };
}

/** Attributes every span of a run has. */
function runAttributes(run: FiredRunRow): Attributes {
  return {
    'timelane.run.id': String(run.id),
    'timelane.job.id': run.job_id,
    'timelane.queue': run.queue,
    'timelane.run.attempt': run.attempt,
    'timelane.run.delivery': run.deliveries,
  };
}

/** The remote parent a stored trace context names (the root context for none, or an unparsable one). */
function contextOf(tc: TraceContext | null): Context {
  if (tc === null) return ROOT_CONTEXT;
  const sc = parseTraceParent(tc.traceparent);
  if (!sc) return ROOT_CONTEXT;
  sc.isRemote = true;
  if (tc.tracestate) sc.traceState = createTraceState(tc.tracestate);
  return trace.setSpanContext(ROOT_CONTEXT, sc);
}

/** A span's context as text, to store or hand out. */
function textOf(span: Span): TraceContext {
  const sc = span.spanContext();
  return { traceparent: formatTraceparent(sc.traceId, sc.spanId, sc.traceFlags), tracestate: sc.traceState?.serialize() || null };
}

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}
