/**
 * Trace context propagation, without a daemon: the W3C text both sides
 * speak (clients/typescript/src/tracing.ts, daemon/tracing/trace-context.ts), when the
 * daemon turns tracing on (start-tracing.ts), and the client's two hooks —
 * the Schedule span whose context goes in the call's metadata, and the
 * worker's span around a handler — against a real SDK with spans in memory.
 */
import { Metadata } from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveredRunInfo } from '@timelane/client';
import { formatTraceparent, parseTraceparent, runContext, traceRun, traceSchedule } from '../../clients/typescript/src/tracing.js';
import { boundedTracestate, MAX_TRACESTATE_CHARS, normaliseTraceparent, traceContextOf } from '../../daemon/tracing/trace-context.js';
import { tracingEndpoint } from '../../daemon/tracing/start-tracing.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const PARENT = `00-${TRACE}-${SPAN}-01`;

describe('W3C traceparent text', () => {
  it('parses a valid traceparent into a remote span context, with its tracestate', () => {
    const sc = parseTraceparent(PARENT, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(sc).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(sc?.traceState?.get('congo')).toBe('t61rcWkgMzE');
    expect(formatTraceparent(sc!)).toEqual({ traceparent: PARENT, tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7' });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.traceFlags).toBe(TraceFlags.NONE);
  });

  it('refuses what the spec calls invalid, on both sides', () => {
    const bad = [
      '',
      'garbage',
      `ff-${TRACE}-${SPAN}-01`, // version ff
      `00-${'0'.repeat(32)}-${SPAN}-01`, // all-zero trace id
      `00-${TRACE}-${'0'.repeat(16)}-01`, // all-zero span id
      `00-${TRACE.toUpperCase()}-${SPAN}-01`, // upper case
      `00-${TRACE}-${SPAN}-01-extra`, // version 00 has exactly four fields
      `00-${TRACE.slice(1)}-${SPAN}-01`,
    ];
    for (const text of bad) {
      expect(parseTraceparent(text), text).toBeNull();
      expect(normaliseTraceparent(text), text).toBeNull();
    }
  });

  it('reads a later version as version 00, dropping its extra fields', () => {
    expect(normaliseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)).toBe(PARENT);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)?.spanId).toBe(SPAN);
  });

  it('keeps whole tracestate entries up to the length limit', () => {
    expect(boundedTracestate(['a=1, b=2', 'c=3'])).toBe('a=1,b=2,c=3');
    expect(boundedTracestate(['', ' '])).toBeNull();
    const long = Array.from({ length: 40 }, (_, i) => `k${i}=${'v'.repeat(20)}`).join(',');
    const kept = boundedTracestate([long])!;
    expect(kept.length).toBeLessThanOrEqual(MAX_TRACESTATE_CHARS);
    expect(long.startsWith(kept)).toBe(true);
    expect(kept.split(',').every((e) => /^k\d+=v{20}$/.test(e))).toBe(true);
  });

  it('takes the trace context of a gRPC call from its metadata, ignoring a malformed one', () => {
    const md = new Metadata();
    expect(traceContextOf(md)).toBeNull();
    md.set('traceparent', PARENT);
    expect(traceContextOf(md)).toEqual({ traceparent: PARENT, tracestate: null });
    md.set('tracestate', 'rojo=1');
    expect(traceContextOf(md)).toEqual({ traceparent: PARENT, tracestate: 'rojo=1' });
    md.set('traceparent', 'not-a-traceparent');
    expect(traceContextOf(md)).toBeNull();
  });
});

describe('the daemon traces only when told where to export', () => {
  it('follows the flag and the standard OTLP environment', () => {
    expect(tracingEndpoint('', {})).toBeNull();
    expect(tracingEndpoint('http://c:4318/v1/traces', {})).toBe('http://c:4318/v1/traces');
    expect(tracingEndpoint('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined(); // the exporter appends /v1/traces
    expect(tracingEndpoint('http://c:4318/v1/traces', { OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingEndpoint('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });
});

describe('client and worker spans', () => {
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const app = trace.getTracer('unit');

  beforeAll(() => provider.register());
  afterAll(() => provider.shutdown());
  beforeEach(() => memory.reset());

  const run = (over: Partial<DeliveredRunInfo> = {}): DeliveredRunInfo =>
    ({ runId: '7', jobId: 'job', queue: 'q', attempt: 2, delivery: 1, lagMs: 1.5, traceparent: PARENT, tracestate: '', ...over }) as DeliveredRunInfo;

  it('sends no trace context, and makes no span, outside an active span', async () => {
    let sent: Metadata | undefined;
    const res = await traceSchedule('timelane.schedule q', {}, async (md) => ((sent = md), 'ok'), () => ({}));
    expect(res).toBe('ok');
    expect(sent?.get('traceparent')).toEqual([]);
    expect(memory.getFinishedSpans()).toEqual([]);
  });

  it('puts a CLIENT span, child of the active span, in the call metadata', async () => {
    let sent: Metadata | undefined;
    await app.startActiveSpan('app', async (parent) => {
      await traceSchedule('timelane.schedule q', { 'timelane.queue': 'q' }, async (md) => ((sent = md), { id: 'r1' }), (r) => ({ 'timelane.run.id': r.id }));
      parent.end();
    });
    const [schedule, parent] = memory.getFinishedSpans();
    expect(schedule.name).toBe('timelane.schedule q');
    expect(schedule.kind).toBe(SpanKind.CLIENT);
    expect(schedule.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(schedule.attributes).toMatchObject({ 'timelane.queue': 'q', 'timelane.run.id': 'r1', 'rpc.system': 'grpc' });
    expect(sent?.get('traceparent')).toEqual([formatTraceparent(schedule.spanContext()).traceparent]);
  });

  it('marks a failed Schedule call on its span', async () => {
    await app.startActiveSpan('app', async (parent) => {
      await expect(traceSchedule('s', {}, () => Promise.reject(new Error('UNAVAILABLE')), () => ({}))).rejects.toThrow('UNAVAILABLE');
      parent.end();
    });
    expect(memory.getFinishedSpans()[0].status).toEqual({ code: SpanStatusCode.ERROR, message: 'UNAVAILABLE' });
  });

  it("runs a handler in a CONSUMER span, child of the run's context and active for the handler's own spans", async () => {
    const out = await traceRun(run(), () => {
      app.startActiveSpan('inner', (s) => s.end());
      return 42;
    });
    expect(out).toBe(42);
    const [inner, worker] = memory.getFinishedSpans();
    expect(worker.name).toBe('timelane.run q');
    expect(worker.kind).toBe(SpanKind.CONSUMER);
    expect(worker.spanContext().traceId).toBe(TRACE);
    expect(worker.parentSpanContext?.spanId).toBe(SPAN);
    expect(worker.attributes).toMatchObject({ 'timelane.run.id': '7', 'timelane.job.id': 'job', 'timelane.run.attempt': 2, 'timelane.run.delivery': 1, 'timelane.run.lag_ms': 1.5 });
    expect(inner.parentSpanContext?.spanId).toBe(worker.spanContext().spanId);
    // Nothing leaks into the caller's context.
    expect(trace.getSpan(context.active())).toBeUndefined();
  });

  it('ends the span with an error when the handler throws, and rethrows', async () => {
    await expect(traceRun(run(), async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const [worker] = memory.getFinishedSpans();
    expect(worker.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(worker.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('starts a new trace for a run that carries no context', async () => {
    expect(runContext(run({ traceparent: '' }))).toBe(ROOT_CONTEXT);
    await traceRun(run({ traceparent: '' }), () => undefined);
    const [worker] = memory.getFinishedSpans();
    expect(worker.parentSpanContext).toBeUndefined();
    expect(worker.spanContext().traceId).not.toBe(TRACE);
  });
});
