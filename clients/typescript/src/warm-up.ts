/**
 * Warm-up: the first worker a process creates runs the per-run code of its
 * receiving path on synthetic runs before it opens a stream, so that a
 * stream opened into a busy queue is not served by V8's interpreter. Cold,
 * a worker started into 10,000 runs/s spent its first second's code at about
 * three times its later cost (611 against 173 ms of CPU a second: decoding,
 * converting, holding and answering), and on two cores shared with its
 * daemon and Postgres that made the first second's runs late
 * (bench/README.md, seventeenth session). The daemon warms its own side up
 * (daemon/engine/warm-up.ts).
 *
 * What runs, in batches of BATCH, the functions a stream calls per run:
 *  1. a RunBatch of synthetic DeliveredRuns encoded as a daemon sends it and
 *     decoded by the Work method's deserializer;
 *  2. each run converted (deliveredRunInfo), held and started by a scratch
 *     StagedRuns (a hold of 0: no timer), given a handler context;
 *  3. their refs encoded as a CompleteBatch; an AckBatch for them decoded
 *     and each ack converted.
 * The handler never runs; nothing is sent; no span, stat or stream is
 * touched. Once per process (the JIT's state is the process's), at most
 * MAX_MS, synchronous: V8 installs what it compiles meanwhile at its next
 * interrupt check, not only between tasks.
 */
import { ackInfo, deliveredRunInfo } from './convert.js';
import { timelaneV1 } from './proto.js';
import { RunAbort } from './run-abort.js';
import { StagedRuns, TransitFloor, type HoldClock } from './staged-runs.js';
import type { DeliveredRun } from '../proto/gen/timelane/v1/DeliveredRun.js';
import type { WorkResponse__Output } from '../proto/gen/timelane/v1/WorkResponse.js';
import type { DeliveredRunInfo } from './types.js';

/** Runs per batch: about what one claim-sized RunBatch carries at 10,000 runs/s. */
const BATCH = 500;
/** The warm-up gives up after this long, done or not (a slow or busy machine). */
const MAX_MS = 1_000;
/** Runs the first worker of a process warms up with (WorkerOptions.warmUpRuns). */
export const DEFAULT_WARM_UP_RUNS = 10_000;

export interface WorkerWarmUpReport {
  runs: number;
  ms: number;
}

let done: WorkerWarmUpReport | undefined;

/**
 * Warms the receiving path up with `runs` synthetic runs, once per process;
 * later calls return the first call's report. `context` makes a handler's
 * context as the session does (injected to keep this module free of the
 * session's).
 */
export function warmUpWorkerOnce(runs: number, context: (heartbeat: () => void, abort: RunAbort) => unknown): WorkerWarmUpReport {
  if (done) return done;
  const started = performance.now();
  const work = timelaneV1().Worker.service.Work;
  const started0: DeliveredRunInfo[] = [];
  // Its timer is fired by hand below: the holds are 0, and the wake is the code to warm.
  let wake: (() => void) | undefined;
  const clock: HoldClock = { now: () => performance.now(), setTimeout: (fn) => (wake = fn), clearTimeout: () => (wake = undefined) };
  const held = new StagedRuns<number>((run) => void started0.push(run), clock);
  const transit = new TransitFloor();
  const noBeat = (): void => undefined;
  let count = 0;
  while (count < runs && performance.now() - started < MAX_MS) {
    const n = Math.min(BATCH, runs - count);
    const now = Date.now();
    const wire: DeliveredRun[] = [];
    for (let i = 0; i < n; i++) wire.push(syntheticRun(count + i, now));
    // 1. As the daemon sends it, and as the stream decodes it.
    const sentMono = performance.now();
    const bytes = work.responseSerialize({ runs: { runs: wire, sentMonoMs: sentMono } });
    const arrived = performance.now();
    const msg = work.responseDeserialize(bytes) as WorkResponse__Output;
    const excess = transit.excess(arrived - sentMono, arrived);
    // 2. Converted, held (for no time: started at once), given a context.
    for (const r of msg.runs?.runs ?? []) {
      const run = deliveredRunInfo(r, now, Math.max(0, r.startMonoMs - sentMono - excess - 1));
      held.take(run.runId);
      held.add(run, 0, arrived - run.startInMs);
    }
    // As the timer would: each wake starts what is due and arms the next (none: every hold is 0).
    for (let k = 0; k < 3 && wake; k++) {
      const w = wake;
      wake = undefined;
      w();
    }
    for (let i = 0; i < started0.length; i++) context(noBeat, new RunAbort());
    // 3. Answered and acked.
    const refs = started0.map((run) => run.ref);
    work.requestSerialize({ completes: { refs } });
    const acks = work.responseDeserialize(work.responseSerialize({ acks: { acks: refs.map((ref) => ({ runId: ref.runId, code: 0, message: '' })) } })) as WorkResponse__Output;
    for (const a of acks.acks?.acks ?? []) ackInfo(a);
    if (started0.length === 0) break; // (never: every hold is 0) — rather stop than spin
    count += started0.length;
    started0.length = 0;
  }
  held.clear();
  done = { runs: count, ms: performance.now() - started };
  return done;
}

function syntheticRun(i: number, nowMs: number): DeliveredRun {
  return {
    runId: String(-1 - i),
    jobId: '00000000-0000-7000-8000-000000000000',
    queue: 'timelane:warm-up',
    attempt: 1,
    payload: Buffer.from('{}'),
    dueAtMs: nowMs,
    firedAtMs: nowMs,
    claimedAtMs: nowMs - 80,
    fence: 1,
    delivery: 1,
    idempotencyKey: `warm-up:${i}`,
    leaseExpiresAtMs: nowMs + 30_000,
    mode: 'AT_LEAST_ONCE',
    shard: i % 64,
    startMonoMs: performance.now() + 1,
  };
}
