/**
 * The Worker.Work stream. States: awaiting Subscribe → subscribed (answered
 * with Subscribed; receives runs within its credit, answers
 * Complete/CompleteBatch/Fail/Heartbeat, each acked with a status code) →
 * closed. Closing leaves unanswered deliveries to be expired, so another
 * worker gets them at once (at-least-once).
 *
 * A Drain (the worker is closing) ends the hand-out of runs to the stream;
 * answers are still taken until the worker half-closes.
 *
 * Per-run cost is what bounds a daemon, so the stream batches both ways:
 * every run handed to this stream in one tick leaves in one RunBatch
 * message, and the acks of one turn of the event loop (a CompleteBatch's, and
 * single Completes written in one batch) leave in one AckBatch.
 */
import { status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { WorkerHandlers } from '../../proto/gen/timelane/v1/Worker.js';
import type { WorkRequest__Output } from '../../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkResponse } from '../../proto/gen/timelane/v1/WorkResponse.js';
import type { DeliveredRun } from '../../proto/gen/timelane/v1/DeliveredRun.js';
import type { Ack } from '../../proto/gen/timelane/v1/Ack.js';
import type { ApiContext } from './context.js';
import { toStatus } from './status.js';
import { deliveredToWire } from './convert.js';
import * as v from './validate.js';
import type { DeliveryRefInput } from './validate.js';
import { invalidArgument, notFound, TimelaneError, unauthenticated } from '../errors.js';
import { undecodableReason } from './malformed.js';
import { callerQueue, tenantOf, unqualifyAnswer } from './tenancy.js';
import { MAX_OUTPUT_BYTES } from './workflow-input.js';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { KnownHandOff } from '../run-ref.js';
import type { AnsweredDelivery, CompletedDelivery } from '../dispatch/answers.js';
import { releasedAt } from '../dispatch/delivery-hub.js';
import type { StreamTracing } from '../tracing/run-tracing.js';

let nextStreamId = 1;

type Stream = ServerDuplexStream<WorkRequest__Output, WorkResponse>;

const MAX_COMPLETES = 10_000;
/** How often an open stream's credential is checked against the credentials file. */
const REVALIDATE_MS = 1_000;
/** A RunBatch is sent once its runs hold this much (a worker's default receive limit is 4 MiB; a payload is at most --max-payload-bytes). */
const MAX_BATCH_BYTES = 1024 * 1024;
/** Bytes of a DeliveredRun besides its payload, for the estimate above (ids, key, times: well under this). */
const RUN_OVERHEAD_BYTES = 256;

export function workerHandlers(ctx: ApiContext): WorkerHandlers {
  return { Work: (call: Stream) => serveStream(ctx, call) };
}

function serveStream(ctx: ApiContext, call: Stream): void {
  const id = nextStreamId++;
  // A namespaced worker subscribes to its namespace's queues only (tenancy.ts).
  const tenant = tenantOf(call);
  let subscribed = false;
  let workerId: string | null = null;
  let closed = false;
  // Runs handed to this stream in the current tick; flushed as one RunBatch,
  // or sooner once they hold MAX_BATCH_BYTES (a worker's receive limit).
  let outbox: DeliveredRun[] = [];
  let outboxBytes = 0;
  let outboxStaged = false;
  // Spans of this stream's deliveries and answers (tracing/run-tracing.ts); null when traces are off.
  let traced: StreamTracing | null = null;

  const write = (msg: WorkResponse): void => {
    if (!closed) call.write(msg);
  };
  // Acks of this turn of the event loop; sent as one AckBatch to a worker that
  // takes batches (one message, not one per Complete: at 1,000 runs/s a
  // Complete batch answers ~5 single Completes at once).
  let acksOut: Ack[] = [];
  let batchAcks = false;
  const flushAcks = (): void => {
    if (acksOut.length === 0) return;
    const out = acksOut;
    acksOut = [];
    write(out.length === 1 ? { ack: out[0] } : { acks: { acks: out } });
  };
  const ack = (a: Ack): void => {
    if (!batchAcks) return write({ ack: a });
    if (acksOut.length === 0) setImmediate(flushAcks);
    acksOut.push(a);
  };
  const ackMany = (list: Ack[]): void => {
    if (!batchAcks) return write({ acks: { acks: list } });
    if (acksOut.length === 0) setImmediate(flushAcks);
    for (const a of list) acksOut.push(a);
  };
  const flush = (): void => {
    if (outbox.length === 0) return;
    const runs = outbox;
    outbox = [];
    outboxBytes = 0;
    // A batch with staged runs carries its send time (stampSendTime sets it as it is encoded).
    write({ runs: { runs, sentMonoMs: outboxStaged ? performance.now() : 0 } });
    outboxStaged = false;
  };

  // A credential removed from the file ends the streams it opened (checked every REVALIDATE_MS).
  const revalidate = setInterval(() => {
    if (!ctx.stillAdmitted(call.metadata)) refuse(unauthenticated('the credential this stream was opened with is no longer admitted (revoked or changed)'));
  }, REVALIDATE_MS);
  revalidate.unref();

  const close = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(revalidate);
    traced?.close();
    if (!subscribed) return;
    const now = ctx.wallNow();
    // A staged run not due yet never started: no hand-off to record (its next delivery records its own).
    const open = ctx.hub.unregister(id).map((d) => ({ ...d, sentAtMs: releasedAt(d, now) }));
    ctx.metrics.workers.set(ctx.hub.streamCount);
    if (open.length)
      ctx.answers.expire(open).then(
        () => ctx.onStreamClosed(),
        (err: unknown) => ctx.log.warn({ err: String(err) }, 'could not expire deliveries of a closed stream'),
      );
  };

  const refuse = (err: unknown): void => {
    const s = toStatus(err, ctx.log);
    close();
    call.emit('error', { code: s.code, details: s.details, message: s.details });
  };

  call.on('data', (req: WorkRequest__Output) => {
    if (closed) return;
    try {
      const undecodable = undecodableReason(req);
      if (undecodable !== null) throw new TimelaneError('invalid_argument', undecodable);
      if (!subscribed) {
        if (req.msg !== 'subscribe' || !req.subscribe) throw invalidArgument('subscribe', 'must be the first message on the stream');
        const given = v.subscribeInput(req.subscribe);
        const sub = { ...given, queues: given.queues.map((q, i) => callerQueue(tenant, `subscribe.queues[${i}]`, q)) };
        subscribed = true;
        batchAcks = sub.batchRuns;
        workerId = sub.workerId;
        write({ subscribed: { memberId: ctx.memberId, queues: given.queues, maxInFlight: sub.maxInFlight } });
        const tracing = (traced = ctx.tracing?.stream(sub.workerId) ?? null);
        const toWire = tracing
          ? (run: FiredRunRow, at: number, startMonoMs: number) => tracing.delivered(run, deliveredToWire(run, at, startMonoMs), at)
          : deliveredToWire;
        ctx.hub.register({
          id,
          workerId: sub.workerId,
          queues: new Set(sub.queues),
          credit: sub.maxInFlight,
          // Staging needs RunBatch (its send time); a stream of single runs gets them at due.
          stageAheadMs: sub.batchRuns ? sub.stageAheadMs : 0,
          send: sub.batchRuns
            ? (run: FiredRunRow, sentAtMs: number, startInMs = 0) => {
                if (outbox.length === 0) queueMicrotask(flush);
                const startMonoMs = startInMs > 0 ? performance.now() + startInMs : 0;
                if (startMonoMs > 0) outboxStaged = true;
                outbox.push(unqualifyAnswer(tenant, toWire(run, sentAtMs, startMonoMs)));
                outboxBytes += run.payload.length + RUN_OVERHEAD_BYTES;
                if (outboxBytes >= MAX_BATCH_BYTES) flush();
              }
            : (run: FiredRunRow, sentAtMs: number) => write({ run: unqualifyAnswer(tenant, toWire(run, sentAtMs, 0)) }),
          cancel: (d, reason) => {
            flush(); // the run goes out before its cancel
            write({ cancel: { ref: { runId: String(d.runId), fence: String(d.fence), delivery: d.deliveries, shard: d.shard }, reason } });
          },
        });
        ctx.metrics.workers.set(ctx.hub.streamCount);
        return;
      }
      if (req.msg === 'drain') {
        // Its worker is closing: no more runs here; its answers still come.
        ctx.hub.drain(id);
        return;
      }
      if (req.msg === 'unstarted') {
        // Not acked: a refusal ends the stream (a bad message), a namespace's stranger runs are left alone.
        const refs = unstartedRefs(req);
        void ctx.scheduling
          .namespacesOfRuns(tenant === null ? [] : refs.map((r) => r.runId))
          .then((ns) => ctx.answers.expire(tenant === null ? refs : refs.filter((r) => ns.get(r.runId) === tenant)))
          .then(
            () => ctx.onStreamClosed(),
            (err: unknown) => ctx.log.warn({ err: String(err), runs: refs.length }, 'could not end the leases of runs a worker left unstarted'),
          );
        return;
      }
      traced?.received(req);
      const [ackThis, ackThese] = traced ? tracedAcks(traced, req, ack, ackMany) : [ack, ackMany];
      const answerNow = (): void => answer(ctx, id, workerId, req, ackThis, ackThese);
      const unheld = tenant === null ? [] : answeredRunIds(req).filter((r) => !ctx.hub.holds(id, r));
      if (unheld.length === 0) answerNow();
      else
        // Answers for runs this stream does not hold (sent after a reconnect, or
        // forged): a namespaced worker may only answer its namespace's runs.
        void ctx.scheduling.namespacesOfRuns(unheld).then(
          (ns) => {
            const foreign = unheld.find((r) => ns.get(r) !== tenant);
            if (foreign === undefined) answerNow();
            else refuseAnswer(ctx, req, foreign, ackThis, ackThese);
          },
          (err: unknown) => ackThis(errorAck(ctx, String(unheld[0]), err)),
        );
    } catch (err) {
      refuse(err);
    }
  });
  call.on('end', () => {
    flushAcks(); // acks ready but waiting for the turn's end go out before the stream ends
    close();
    call.end();
  });
  call.on('cancelled', close);
  call.on('error', close);
  call.on('close', close);
}

/**
 * The ack callbacks of one answer message, ending its answer spans as each
 * ack is made: an ack is matched to the delivery it answers here, where both
 * are known (a heartbeat's ack ends nothing). A CompleteBatch's acks come in
 * ref order; one error ack for the whole message answers every ref.
 */
function tracedAcks(traced: StreamTracing, req: WorkRequest__Output, ack: (a: Ack) => void, acks: (a: Ack[]) => void): [(a: Ack) => void, (a: Ack[]) => void] {
  const refs = req.msg === 'completes' ? (req.completes?.refs ?? []) : req.msg === 'complete' ? [req.complete?.ref] : req.msg === 'fail' ? [req.fail?.ref] : [];
  const one = (a: Ack): void => {
    for (const ref of refs) if (ref) traced.answered(ref.runId, ref.delivery, a);
    ack(a);
  };
  const many = (list: Ack[]): void => {
    list.forEach((a, i) => {
      const ref = refs[i];
      if (ref) traced.answered(ref.runId, ref.delivery, a);
    });
    acks(list);
  };
  return [one, many];
}

/**
 * The delivery an answer refers to, with what this daemon knows of it: a
 * settling answer frees the stream's credit as it arrives (the worker is done
 * with the run whatever the write's outcome) and brings the hand-off time.
 */
function answered(ctx: ApiContext, streamId: number, ref: DeliveryRefInput, settles: boolean): AnsweredDelivery & { step: boolean } {
  const held = settles ? ctx.hub.settle(streamId, ref.runId, ref) : ctx.hub.peek(streamId, ref.runId, ref);
  // (A staged run answered before its due time — its worker was told to cancel it — gets its due time: the answer's statements have no "never started".)
  return { ...ref, shard: ref.shard ?? held?.shard ?? null, sentAtMs: held?.sentAtMs ?? null, step: held?.step ?? false };
}

/** Handles one answer message; always answers with an Ack (or an AckBatch for a CompleteBatch). */
function answer(ctx: ApiContext, streamId: number, workerId: string | null, req: WorkRequest__Output, ack: (a: Ack) => void, acks: (a: Ack[]) => void): void {
  let runIdText = '';
  const done = (p: Promise<Partial<Ack>>): void => {
    p.then(
      (extra) => ack({ runId: runIdText, code: Status.OK, message: '', ...extra }),
      (err: unknown) => ack(errorAck(ctx, runIdText, err)),
    );
  };
  try {
    switch (req.msg) {
      case 'completes': {
        const refs = req.completes?.refs ?? [];
        if (refs.length === 0 || refs.length > MAX_COMPLETES) throw invalidArgument('completes.refs', `must hold 1..${MAX_COMPLETES} refs (got ${refs.length})`);
        completeBatch(ctx, streamId, refs, acks);
        return;
      }
      case 'complete': {
        runIdText = req.complete?.ref?.runId ?? '';
        const d = answered(ctx, streamId, v.deliveryRef('complete.ref', req.complete?.ref ?? null), true);
        // Refused after the credit is freed: the run stays fired and is redelivered when its lease ends.
        const output = req.complete?.output && req.complete.output.length > 0 ? req.complete.output : null;
        if (output && output.length > MAX_OUTPUT_BYTES) throw invalidArgument('complete.output', `must be at most ${MAX_OUTPUT_BYTES} bytes (got ${output.length})`);
        done(
          ctx.answers.complete([{ ...d, output }]).then(([err]) => {
            if (err) throw err;
            ctx.metrics.completed.inc();
            return {};
          }),
        );
        return;
      }
      case 'fail': {
        const f = req.fail;
        runIdText = f?.ref?.runId ?? '';
        const d = answered(ctx, streamId, v.deliveryRef('fail.ref', f?.ref ?? null), true);
        const message = v.answerText(f?.message ?? '', 4096);
        done(
          ctx.answers.fail(d, f?.retryable ?? false, message, workerId).then((out) => {
            ctx.metrics.failed.inc({ outcome: out.status === 'failed' ? 'retry' : out.status });
            if (out.status === 'dead') ctx.log.warn({ runId: d.runId, workerId, error: message.slice(0, 200) }, 'run is dead (dead letter): no retry left, or not retryable');
            return { retryRunId: out.retry ? String(out.retry.runId) : '' };
          }),
        );
        return;
      }
      case 'heartbeat': {
        const h = req.heartbeat;
        runIdText = h?.ref?.runId ?? '';
        const ref = v.deliveryRef('heartbeat.ref', h?.ref ?? null);
        const progress = h?.progress ?? 0;
        if (!(progress >= 0 && progress <= 1)) throw invalidArgument('heartbeat.progress', 'must be between 0 and 1');
        const checkpoint = h?.checkpoint && h.checkpoint.length > 0 ? h.checkpoint : null;
        if (checkpoint && checkpoint.length > 65_536) throw invalidArgument('heartbeat.checkpoint', 'must be at most 64 KiB');
        done(ctx.answers.heartbeat(answered(ctx, streamId, ref, false), progress, checkpoint, workerId).then(() => ({})));
        return;
      }
      default:
        throw invalidArgument('msg', req.msg === 'subscribe' ? 'subscribe may only be sent once' : 'one of complete, completes, fail, heartbeat, drain or unstarted is required');
    }
  } catch (err) {
    ack(errorAck(ctx, runIdText, err));
  }
}

/** An Unstarted message's deliveries, each with its shard (they end as a stream's unanswered deliveries do). */
function unstartedRefs(req: WorkRequest__Output): KnownHandOff[] {
  const refs = req.unstarted?.refs ?? [];
  if (refs.length === 0 || refs.length > MAX_COMPLETES) throw invalidArgument('unstarted.refs', `must hold 1..${MAX_COMPLETES} refs (got ${refs.length})`);
  return refs.map((raw, i) => {
    const ref = v.deliveryRef(`unstarted.refs[${i}]`, raw);
    if (ref.shard === null) throw invalidArgument(`unstarted.refs[${i}].shard`, 'is required');
    // Never started: no hand-off to record.
    return { ...ref, shard: ref.shard, sentAtMs: null };
  });
}

/** The run ids an answer names (well-formed ones; the rest fail validation in answer()). */
function answeredRunIds(req: WorkRequest__Output): number[] {
  const ids =
    req.msg === 'completes'
      ? (req.completes?.refs ?? []).map((r) => r.runId)
      : [req.complete?.ref?.runId, req.fail?.ref?.runId, req.heartbeat?.ref?.runId].filter((x): x is string => x !== undefined);
  return ids.filter((x) => /^[1-9][0-9]{0,15}$/.test(x)).map(Number);
}

/** Answers a message naming another namespace's run: NOT_FOUND (as if it did not exist); nothing is written. */
function refuseAnswer(ctx: ApiContext, req: WorkRequest__Output, runId: number, ack: (a: Ack) => void, acks: (a: Ack[]) => void): void {
  const err = notFound(`run ${runId}`);
  if (req.msg === 'completes') acks((req.completes?.refs ?? []).map((r) => errorAck(ctx, r.runId, err)));
  else ack(errorAck(ctx, String(runId), err));
}

/** A CompleteBatch: each ref validated and judged on its own; one AckBatch back, in ref order. */
function completeBatch(ctx: ApiContext, streamId: number, refs: NonNullable<WorkRequest__Output['completes']>['refs'], acks: (a: Ack[]) => void): void {
  const out: Ack[] = new Array<Ack>(refs.length);
  const valid: CompletedDelivery[] = [];
  const at: number[] = [];
  refs.forEach((raw, i) => {
    try {
      valid.push(answered(ctx, streamId, v.deliveryRef(`completes.refs[${i}]`, raw), true));
      at.push(i);
    } catch (err) {
      out[i] = errorAck(ctx, raw.runId, err);
    }
  });
  const written = valid.length > 0 ? ctx.answers.complete(valid) : Promise.resolve([]);
  written.then(
    (errs) => {
      let ok = 0;
      errs.forEach((err, k) => {
        const i = at[k];
        if (err) out[i] = errorAck(ctx, refs[i].runId, err);
        else {
          out[i] = { runId: refs[i].runId, code: Status.OK, message: '' };
          ok++;
        }
      });
      ctx.metrics.completed.inc(ok);
      acks(out);
    },
    (err: unknown) => {
      for (const i of at) out[i] = errorAck(ctx, refs[i].runId, err);
      acks(out);
    },
  );
}

function errorAck(ctx: ApiContext, runId: string, err: unknown): Ack {
  const s = toStatus(err, ctx.log);
  if (s.code === Status.FAILED_PRECONDITION || s.code === Status.NOT_FOUND) ctx.metrics.rejectedAnswers.inc();
  return { runId, code: s.code, message: s.details };
}
