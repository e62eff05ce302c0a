/**
 * Warm-up: before the daemon takes a shard, the per-run code of its fire path
 * runs on synthetic runs, so that the first burst it fires is not run by
 * V8's interpreter. Cold, that code cost several times its warm price: in the
 * first second of a 10,000 runs/s burst the event loop stalled 20–50 ms at a
 * time and claims came back up to 100 ms late; warm, the same second is like
 * any other (bench/README.md).
 *
 * What runs, on `runs` synthetic fired runs in batches of BATCH, the same
 * functions the fire path calls per run:
 *  1. the claim's result: rows of exactly CLAIM_RUNS' shape, made by Postgres
 *     without reading a table (WARM_UP_FIRED_ROWS), parsed by pg;
 *  2. the release gate and the delivery hub (scratch instances, never the
 *     engine's): admitted, staged at a scratch worker sink, settled;
 *  3. the hand-over: each run as a DeliveredRun, the RunBatch encoded by the
 *     Work method's serializer;
 *  4. the answers: a CompleteBatch of their refs decoded by the Work method's
 *     deserializer, each ref validated, written by COMPLETE_RUNS (negative
 *     ids: it matches no run), and acked in an AckBatch.
 * Nothing it makes leaves this module: no row is written, no metric counted,
 * no stream or run of the engine touched. It yields between batches (V8
 * compiles on another thread, and installs what it compiled between tasks)
 * and stops after MAX_MS whatever it has done.
 */
import type { Answers } from '../dispatch/answers.js';
import { DeliveryHub, type WorkerSink } from '../dispatch/delivery-hub.js';
import { ReleaseGate } from '../dispatch/release-gate.js';
import { query, type Db } from '../db/pool.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import { WARM_UP_FIRED_ROWS } from '../db/queries/dispatch.js';
import type { Clock } from '../fast/clock.js';
import { deliveredToWire } from '../grpc/convert.js';
import { serverProto } from '../grpc/proto.js';
import { deliveryRef } from '../grpc/validate.js';
import type { DeliveryRef__Output } from '../../proto/gen/timelane/v1/DeliveryRef.js';
import type { WorkRequest__Output } from '../../proto/gen/timelane/v1/WorkRequest.js';

/** Runs per batch: about what one claim returns at 10,000 runs/s. */
const BATCH = 500;
/** The warm-up gives up after this long, done or not (a slow or busy machine). */
const MAX_MS = 3_000;

export interface WarmUpReport {
  runs: number;
  ms: number;
}

export async function warmUp(db: Db, answers: Answers, clock: Clock, runs: number): Promise<WarmUpReport> {
  const started = performance.now();
  const work = serverProto().pkg.Worker.service.Work;
  const sent: FiredRunRow[] = [];
  const sink: WorkerSink = { id: -1, workerId: 'warm-up', queues: new Set(['timelane:warm-up']), credit: BATCH, stageAheadMs: 1_000, send: (run) => void sent.push(run) };
  const hub = new DeliveryHub(undefined, undefined, () => clock.wallNow());
  hub.register(sink);
  const gate = new ReleaseGate(
    clock,
    (run) => hub.deliver(run),
    () => undefined,
    (run, startInMs) => hub.stage(run, startInMs),
  );
  gate.start();
  let done = 0;
  try {
    while (done < runs && performance.now() - started < MAX_MS) {
      const n = Math.min(BATCH, runs - done);
      // 1. As a claim returns them (due a little ahead, as claimed ahead).
      const { rows } = await query<FiredRunRow>(db, WARM_UP_FIRED_ROWS, [n]);
      const now = clock.wallNow();
      // 2. Through the gate and the hub to a worker that stages them.
      for (const row of rows) {
        row.due_at_ms = now + 50;
        gate.admit(row);
      }
      // 3. The hand-over, as the worker stream writes it.
      const startMono = performance.now() + 50;
      const wire = sent.map((run) => deliveredToWire(run, run.due_at_ms, startMono));
      work.responseSerialize({ runs: { runs: wire, sentMonoMs: performance.now() } });
      // 4. Their answers.
      const refs: DeliveryRef__Output[] = wire.map((d) => ({ runId: String(-Number(d.runId)), fence: String(d.fence), delivery: d.delivery ?? 1, shard: d.shard, _shard: 'shard' }));
      const bytes = work.requestSerialize({ completes: { refs } });
      const req = work.requestDeserialize(bytes) as WorkRequest__Output;
      const answered = (req.completes?.refs ?? []).map((ref, i) => deliveryRef(`completes.refs[${i}]`, ref));
      await answers.rehearseComplete(answered.map((d) => ({ runId: -d.runId, fence: d.fence, deliveries: d.deliveries, shard: d.shard ?? 0, sentAtMs: null })));
      work.responseSerialize({ acks: { acks: answered.map((d) => ({ runId: String(d.runId), code: 0, message: '' })) } });
      for (const run of sent) hub.settle(sink.id, run.id);
      sent.length = 0;
      done += rows.length;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    gate.stop();
    hub.unregister(sink.id);
  }
  return { runs: done, ms: performance.now() - started };
}
