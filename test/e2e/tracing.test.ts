/**
 * End to end: OpenTelemetry traces follow a run from the app's Schedule to
 * its worker's handler, across three processes — this test process (the
 * app: a real NodeTracerProvider, spans kept in memory), a daemon child
 * process exporting OTLP/HTTP JSON, and an OTLP collector stand-in here
 * (test/helpers/otlp-collector.ts) that keeps what the daemon exports.
 *
 * - Daemons exporting traces: the app's span → the client's Schedule span →
 *   the daemon's Schedule span → claim, deliver, complete; deliver → the
 *   worker's span → the handler's own span. One trace id, each parent right.
 *   Scheduled on one daemon and fired by another (each pinned to one shard),
 *   the run's stored context still ties the two daemons' spans together. A
 *   failed attempt and its retry stay in the trace.
 * - A daemon without OTLP loads no SDK and carries the client's context
 *   through unchanged: the run's traceparent names the client's Schedule
 *   span; empty when the app had no active span; the same for every run of
 *   a ScheduleBatch.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveredRunInfo, ScheduleResult, TimelaneClient } from '@timelane/client';
import type { DaemonProcess } from '../../ops/local/daemon-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { closeClient, collectRuns, openClient, startDaemon, stopDaemon, waitForOwnedShards, waitUntil } from '../helpers/e2e.js';
import { OTLP_KIND, startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../helpers/otlp-collector.js';

const SHARDS = 2;

let db: TestDatabase;
let collector: OtlpCollector;
const memory = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
const app = trace.getTracer('test-app');

beforeAll(async () => {
  provider.register();
  db = await createTestDatabase(SHARDS);
  collector = await startOtlpCollector();
});

afterAll(async () => {
  await provider.shutdown();
  await collector?.close();
  await db?.drop();
});

/** The run's spans in this process, by name. */
const appSpans = (name: string): ReadableSpan[] => memory.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (s: ReadableSpan): string => s.parentSpanContext?.spanId ?? '';
/** "00-<trace>-<span>-<flags>" → [trace, span]. */
const idsOf = (traceparent: string): [string, string] => {
  const [, traceId, spanId] = traceparent.split('-');
  return [traceId, spanId];
};

/** What a schedule made, and the ids of the app span it was made in. */
interface Scheduled<T> {
  made: T;
  traceId: string;
  spanId: string;
}

/** Schedules inside an app span. */
async function scheduleInSpan<T>(schedule: () => Promise<T>): Promise<Scheduled<T>> {
  return app.startActiveSpan('app.request', async (span) => {
    try {
      return { made: await schedule(), traceId: span.spanContext().traceId, spanId: span.spanContext().spanId };
    } finally {
      span.end();
    }
  });
}

async function waitCompleted(client: TimelaneClient, runId: string): Promise<boolean> {
  return waitUntil(async () => (await client.getRun(runId)).status === 'completed', 10_000);
}

describe('daemons exporting traces (OTLP/HTTP)', () => {
  // Two daemons on Postgres leases, each pinned to one of the two shards.
  let a: DaemonProcess | undefined;
  let b: DaemonProcess | undefined;
  let client: TimelaneClient;
  let clientB: TimelaneClient;
  const addresses = (): string[] => [a!.address, b!.address];

  beforeAll(async () => {
    const traced = (member: string, shard: number): Promise<DaemonProcess> =>
      startDaemon({
        databaseUrl: db.url,
        args: ['--member-id', member, '--shards', `${shard}-${shard}`, '--otlp-traces-endpoint', collector.url],
        env: { OTEL_BSP_SCHEDULE_DELAY: '100' },
      });
    [a, b] = await Promise.all([traced('traced-a', 0), traced('traced-b', 1)]);
    client = openClient(a.address);
    clientB = openClient(b.address);
    expect(await waitForOwnedShards(client, 1)).toBe(true);
    expect(await waitForOwnedShards(clientB, 1)).toBe(true);
  });

  afterAll(async () => {
    closeClient(client);
    closeClient(clientB);
    await Promise.all([stopDaemon(a), stopDaemon(b)]);
  });

  /** The daemon's exported spans of a run, once every one of `names` arrived. */
  async function daemonSpans(runId: string, names: string[]): Promise<Map<string, CollectedSpan>> {
    const mine = (): CollectedSpan[] => collector.spans.filter((s) => s.attributes['timelane.run.id'] === runId);
    const ok = await waitUntil(() => names.every((n) => mine().some((s) => s.name === n)), 10_000);
    expect(ok, `spans of run ${runId}: ${mine().map((s) => s.name).join(', ')}`).toBe(true);
    return new Map(mine().map((s) => [s.name, s]));
  }

  it('makes one trace from the app span through Schedule, claim, delivery and the handler to the answer', async () => {
    const queue = 'traced';
    const runs: DeliveredRunInfo[] = [];
    const w = collectRuns({
      address: addresses(),
      queues: [queue],
      handler: (run) => {
        runs.push(run);
        app.startActiveSpan('app.work', (s) => s.end());
      },
    });
    try {
      const { made, traceId, spanId: appSpanId } = await scheduleInSpan(() => client.schedule({ queue, delayMs: 300 }));
      const runId = made.run.id;
      expect(await w.recorder.waitForAll([runId], 10_000)).toBe(true);
      expect(await waitCompleted(client, runId)).toBe(true);
      const d = await daemonSpans(runId, ['timelane.v1.Scheduler/Schedule', 'timelane.claim', 'timelane.deliver', 'timelane.complete']);
      const serve = d.get('timelane.v1.Scheduler/Schedule')!;
      const claim = d.get('timelane.claim')!;
      const deliver = d.get('timelane.deliver')!;
      const complete = d.get('timelane.complete')!;

      const [clientSpan] = appSpans(`timelane.schedule ${queue}`);
      const [workerSpan] = appSpans(`timelane.run ${queue}`);
      const [inner] = appSpans('app.work');
      expect(clientSpan && workerSpan && inner).toBeTruthy();

      // One trace, across the app, the daemon and the worker.
      for (const s of [clientSpan, workerSpan, inner]) expect(s.spanContext().traceId).toBe(traceId);
      for (const s of [serve, claim, deliver, complete]) expect(s.traceId).toBe(traceId);

      // Parentage: app → client Schedule → daemon Schedule → claim / deliver / complete; deliver → worker → app.work.
      expect(parentOf(clientSpan)).toBe(appSpanId);
      expect(clientSpan.kind).toBe(SpanKind.CLIENT);
      expect(serve.parentSpanId).toBe(clientSpan.spanContext().spanId);
      expect(serve.kind).toBe(OTLP_KIND.SERVER);
      expect(claim.parentSpanId).toBe(serve.spanId);
      expect(deliver.parentSpanId).toBe(serve.spanId);
      expect(deliver.kind).toBe(OTLP_KIND.PRODUCER);
      expect(complete.parentSpanId).toBe(serve.spanId);
      // The worker's span is a child of the context the delivered run carried: the deliver span.
      expect(idsOf(runs[0].traceparent)).toEqual([traceId, deliver.spanId]);
      expect(parentOf(workerSpan)).toBe(deliver.spanId);
      expect(workerSpan.kind).toBe(SpanKind.CONSUMER);
      expect(parentOf(inner)).toBe(workerSpan.spanContext().spanId);

      // What the spans say.
      expect(serve.attributes).toMatchObject({ 'rpc.method': 'Schedule', 'timelane.job.id': made.job.id, 'timelane.queue': queue });
      expect(claim.attributes).toMatchObject({ 'timelane.job.id': made.job.id, 'timelane.queue': queue, 'timelane.run.attempt': 1, 'timelane.claim.redelivery': false });
      expect(deliver.attributes).toMatchObject({ 'timelane.queue': queue, 'timelane.run.delivery': 1, 'messaging.destination.name': queue });
      expect(complete.attributes).toMatchObject({ 'rpc.grpc.status_code': 0 });
      expect(complete.statusCode).not.toBe(2);
      expect(serve.instance).toBe('traced-a');
      expect(claim.instance).toBe(made.run.shard === 0 ? 'traced-a' : 'traced-b');
      expect(workerSpan.attributes).toMatchObject({
        'timelane.run.id': runId,
        'timelane.job.id': made.job.id,
        'timelane.queue': queue,
        'timelane.run.attempt': 1,
        'timelane.run.delivery': 1,
      });
      expect(typeof workerSpan.attributes['timelane.run.lag_ms']).toBe('number');
      expect(workerSpan.status.code).toBe(SpanStatusCode.UNSET);
      expect(collector.rejected).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it('keeps a failed attempt and its retry in the trace, the failure marked as an error', async () => {
    const queue = 'traced-retry';
    const runs: DeliveredRunInfo[] = [];
    const w = collectRuns({
      address: addresses(),
      queues: [queue],
      handler: (run) => {
        runs.push(run);
        if (run.attempt === 1) throw new Error('first attempt fails');
      },
    });
    try {
      const { made, traceId } = await scheduleInSpan(() => client.schedule({ queue, delayMs: 200, retry: { maxAttempts: 2, initialBackoffMs: 100 } }));
      expect(await w.recorder.waitFor((r) => r.receipts.length >= 2, 10_000)).toBe(true);
      const retryId = runs[1].runId;
      expect(await waitCompleted(client, retryId)).toBe(true);

      const first = await daemonSpans(made.run.id, ['timelane.v1.Scheduler/Schedule', 'timelane.claim', 'timelane.deliver', 'timelane.fail']);
      const retry = await daemonSpans(retryId, ['timelane.claim', 'timelane.deliver', 'timelane.complete']);
      const serve = first.get('timelane.v1.Scheduler/Schedule')!;
      const fail = first.get('timelane.fail')!;
      expect(fail.parentSpanId).toBe(serve.spanId);
      expect(fail.attributes).toMatchObject({ 'timelane.fail.retryable': true, 'timelane.retry_run.id': retryId, 'timelane.fail.message': 'first attempt fails' });
      // The retry run carries its failed attempt's context: its spans hang under the same Schedule.
      for (const s of retry.values()) {
        expect(s.traceId).toBe(traceId);
        expect(s.parentSpanId).toBe(serve.spanId);
      }

      const attempts = appSpans(`timelane.run ${queue}`).sort((a, b) => Number(a.attributes['timelane.run.attempt']) - Number(b.attributes['timelane.run.attempt']));
      expect(attempts.map((s) => s.attributes['timelane.run.attempt'])).toEqual([1, 2]);
      for (const s of attempts) expect(s.spanContext().traceId).toBe(traceId);
      expect(attempts[0].status.code).toBe(SpanStatusCode.ERROR);
      expect(attempts[0].events.some((e) => e.name === 'exception')).toBe(true);
      expect(attempts[1].status.code).toBe(SpanStatusCode.UNSET);
      expect(parentOf(attempts[1])).toBe(retry.get('timelane.deliver')!.spanId);
    } finally {
      await w.close();
    }
  });

  it('gives each delivery its own answer span: a late answer of an older delivery is an error, the current one an OK, a heartbeat ends neither', async () => {
    const queue = 'traced-overlap';
    let secondArrived: () => void = () => undefined;
    const second = new Promise<void>((r) => (secondArrived = r));
    const w = collectRuns({
      address: addresses(),
      queues: [queue],
      handler: async (run, ctx) => {
        if (run.delivery === 1) {
          // Past its 1 s lease: answered only once the redelivery is in flight on this same stream.
          await Promise.race([second, new Promise((r) => setTimeout(r, 15_000))]);
          return;
        }
        secondArrived();
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 300));
          await ctx.heartbeat(0.1 * (i + 1));
        }
      },
    });
    try {
      const made = await client.schedule({ queue, delayMs: 200, leaseMs: 1_000 });
      const runId = made.run.id;
      expect(await waitCompleted(client, runId)).toBe(true);
      const completes = (): CollectedSpan[] => collector.spans.filter((s) => s.attributes['timelane.run.id'] === runId && s.name === 'timelane.complete');
      expect(await waitUntil(() => completes().length >= 2, 10_000), JSON.stringify(completes().map((s) => s.attributes))).toBe(true);
      const byDelivery = new Map(completes().map((s) => [Number(s.attributes['timelane.run.delivery']), s]));
      expect([...byDelivery.keys()].sort()).toEqual([1, 2]);
      expect(byDelivery.get(1)!.attributes['rpc.grpc.status_code']).toBe(9); // FAILED_PRECONDITION: superseded
      expect(byDelivery.get(1)!.statusCode).toBe(2);
      expect(byDelivery.get(2)!.attributes['rpc.grpc.status_code']).toBe(0);
      expect(byDelivery.get(2)!.statusCode).not.toBe(2);
    } finally {
      await w.close();
    }
  });

  it("ties the spans of the daemon that scheduled a run to those of the daemon that fired it, through the run's stored context", async () => {
    const queue = 'traced-across';
    const runs: DeliveredRunInfo[] = [];
    const w = collectRuns({ address: addresses(), queues: [queue], handler: (run) => void runs.push(run) });
    try {
      // Scheduled through daemon a until one lands on shard 1, which daemon b fires (at most a few tries: shards are a hash of random ids).
      let picked: Scheduled<ScheduleResult> | undefined;
      for (let i = 0; i < 40 && !picked; i++) {
        const s = await scheduleInSpan(() => client.schedule({ queue, delayMs: 300 }));
        if (s.made.run.shard === 1) picked = s;
      }
      expect(picked).toBeDefined();
      const runId = picked!.made.run.id;
      expect(await waitCompleted(client, runId)).toBe(true);
      const d = await daemonSpans(runId, ['timelane.v1.Scheduler/Schedule', 'timelane.claim', 'timelane.deliver', 'timelane.complete']);
      const serve = d.get('timelane.v1.Scheduler/Schedule')!;
      expect(serve.instance).toBe('traced-a');
      for (const name of ['timelane.claim', 'timelane.deliver', 'timelane.complete']) {
        const span = d.get(name)!;
        expect(span.instance, name).toBe('traced-b');
        expect(span.traceId, name).toBe(picked!.traceId);
        expect(span.parentSpanId, name).toBe(serve.spanId);
      }
      const run = runs.find((r) => r.runId === runId)!;
      expect(idsOf(run.traceparent)).toEqual([picked!.traceId, d.get('timelane.deliver')!.spanId]);
    } finally {
      await w.close();
    }
  });
});

describe('a daemon without OTLP configured', () => {
  let daemon: DaemonProcess | undefined;
  let client: TimelaneClient;

  beforeAll(async () => {
    daemon = await startDaemon({ databaseUrl: db.url, args: ['--member-id', 'plain'] });
    client = openClient(daemon.address);
    expect(await waitForOwnedShards(client, SHARDS)).toBe(true);
  });

  afterAll(async () => {
    closeClient(client);
    await stopDaemon(daemon);
  });

  it('loads no tracing SDK and delivers the client context unchanged, or none outside a span', async () => {
    const queue = 'plain';
    const runs = new Map<string, DeliveredRunInfo>();
    const w = collectRuns({ address: daemon!.address, queues: [queue], handler: (run) => void runs.set(run.runId, run) });
    try {
      const inSpan = await scheduleInSpan(() => client.schedule({ queue, delayMs: 100 }));
      const outside = await client.schedule({ queue, delayMs: 100 });
      const batch = await scheduleInSpan(() => client.scheduleBatch([{ queue, delayMs: 100 }, { queue, delayMs: 150 }]));
      const all = [inSpan.made.run.id, outside.run.id, ...batch.made.map((b) => b.run.id)];
      expect(await w.recorder.waitForAll(all, 10_000)).toBe(true);
      // A worker span ends as its handler returns, just after the recorder saw the run.
      const finished = (): Set<unknown> => new Set(appSpans(`timelane.run ${queue}`).map((s) => s.attributes['timelane.run.id']));
      expect(await waitUntil(() => all.every((id) => finished().has(id)), 5_000)).toBe(true);

      // Inside a span: the run carries the client's Schedule span (the daemon adds none of its own).
      const [clientSpan] = appSpans(`timelane.schedule ${queue}`);
      expect(parentOf(clientSpan)).toBe(inSpan.spanId);
      expect(idsOf(runs.get(inSpan.made.run.id)!.traceparent)).toEqual([inSpan.traceId, clientSpan.spanContext().spanId]);
      const workerSpans = appSpans(`timelane.run ${queue}`);
      const workerOf = (runId: string): ReadableSpan => workerSpans.find((s) => s.attributes['timelane.run.id'] === runId)!;
      expect(parentOf(workerOf(inSpan.made.run.id))).toBe(clientSpan.spanContext().spanId);
      expect(workerOf(inSpan.made.run.id).spanContext().traceId).toBe(inSpan.traceId);

      // Outside any span: nothing carried; the worker's span starts a trace of its own.
      expect(runs.get(outside.run.id)!.traceparent).toBe('');
      expect(runs.get(outside.run.id)!.tracestate).toBe('');
      expect(workerOf(outside.run.id).parentSpanContext).toBeUndefined();
      expect(workerOf(outside.run.id).spanContext().traceId).not.toBe(inSpan.traceId);

      // A batch: every run carries the batch call's span.
      const [batchSpan] = appSpans('timelane.schedule_batch');
      expect(parentOf(batchSpan)).toBe(batch.spanId);
      for (const b of batch.made) expect(idsOf(runs.get(b.run.id)!.traceparent)).toEqual([batch.traceId, batchSpan.spanContext().spanId]);

      expect(daemon!.logs.some((l) => String(l.msg).includes('exporting traces'))).toBe(false);
      expect(collector.spans.some((s) => s.instance === 'plain')).toBe(false);
    } finally {
      await w.close();
    }
  });
});
