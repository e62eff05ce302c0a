/**
 * The Worker.Work stream. States: awaiting Subscribe → subscribed (receives
 * runs within its credit, answers Complete/Fail/Heartbeat, each acked with a
 * status code) → closed. Closing leaves unanswered deliveries to be expired,
 * so another worker gets them at once (at-least-once).
 */
import { status as Status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { WorkerHandlers } from '../../proto/gen/timelane/v1/Worker.js';
import type { WorkRequest__Output } from '../../proto/gen/timelane/v1/WorkRequest.js';
import type { WorkResponse } from '../../proto/gen/timelane/v1/WorkResponse.js';
import type { Ack } from '../../proto/gen/timelane/v1/Ack.js';
import type { ApiContext } from './context.js';
import { toStatus } from './status.js';
import { deliveredToWire } from './convert.js';
import * as v from './validate.js';
import type { DeliveryRefInput } from './validate.js';
import { failRun, heartbeatRun } from '../dispatch/answers.js';
import { invalidArgument } from '../errors.js';
import type { FiredRunRow } from '../db/queries/columns.js';

let nextStreamId = 1;

type Stream = ServerDuplexStream<WorkRequest__Output, WorkResponse>;

export function workerHandlers(ctx: ApiContext): WorkerHandlers {
  return { Work: (call: Stream) => serveStream(ctx, call) };
}

function serveStream(ctx: ApiContext, call: Stream): void {
  const id = nextStreamId++;
  let subscribed = false;
  let closed = false;

  const write = (msg: WorkResponse): void => {
    if (!closed) call.write(msg);
  };
  const ack = (a: Ack): void => write({ ack: a });

  const close = (): void => {
    if (closed) return;
    closed = true;
    if (!subscribed) return;
    const open = ctx.hub.unregister(id);
    ctx.metrics.workers.set(ctx.hub.streamCount);
    if (open.length) ctx.expireDeliveries(open).catch((err: unknown) => ctx.log.warn({ err: String(err) }, 'could not expire deliveries of a closed stream'));
  };

  const refuse = (err: unknown): void => {
    const s = toStatus(err, ctx.log);
    close();
    call.emit('error', { code: s.code, details: s.details, message: s.details });
  };

  call.on('data', (req: WorkRequest__Output) => {
    if (closed) return;
    try {
      if (!subscribed) {
        if (req.msg !== 'subscribe' || !req.subscribe) throw invalidArgument('subscribe', 'must be the first message on the stream');
        const sub = v.subscribeInput(req.subscribe);
        subscribed = true;
        ctx.hub.register({
          id,
          workerId: sub.workerId,
          queues: new Set(sub.queues),
          credit: sub.maxInFlight,
          send: (run: FiredRunRow) => write({ run: deliveredToWire(run) }),
        });
        ctx.metrics.workers.set(ctx.hub.streamCount);
        return;
      }
      answer(ctx, id, req, ack);
    } catch (err) {
      refuse(err);
    }
  });
  call.on('end', () => {
    close();
    call.end();
  });
  call.on('cancelled', close);
  call.on('error', close);
  call.on('close', close);
}

/** Handles one Complete/Fail/Heartbeat; always answers with an Ack. */
function answer(ctx: ApiContext, streamId: number, req: WorkRequest__Output, ack: (a: Ack) => void): void {
  let runIdText = '';
  // A Complete/Fail frees the stream's credit as it arrives: the worker is done
  // with the run whatever the write's outcome, and credit must not wait on it.
  const done = (p: Promise<Partial<Ack>>, settles: boolean, ref: DeliveryRefInput): void => {
    if (settles) ctx.hub.settle(streamId, ref.runId, ref);
    p.then(
      (extra) => ack({ runId: runIdText, code: Status.OK, message: '', ...extra }),
      (err: unknown) => {
        const s = toStatus(err, ctx.log);
        if (s.code === Status.FAILED_PRECONDITION || s.code === Status.NOT_FOUND) ctx.metrics.rejectedAnswers.inc();
        ack({ runId: runIdText, code: s.code, message: s.details });
      },
    );
  };
  try {
    switch (req.msg) {
      case 'complete': {
        runIdText = req.complete?.ref?.runId ?? '';
        const ref = v.deliveryRef('complete.ref', req.complete?.ref ?? null);
        done(
          ctx.completions.complete(ref).then(() => {
            ctx.metrics.completed.inc();
            return {};
          }),
          true,
          ref,
        );
        return;
      }
      case 'fail': {
        const f = req.fail;
        runIdText = f?.ref?.runId ?? '';
        const ref = v.deliveryRef('fail.ref', f?.ref ?? null);
        const message = (f?.message ?? '').slice(0, 4096);
        done(
          failRun(ctx.answerDb, ref, f?.retryable ?? false, message).then(async (out) => {
            ctx.metrics.failed.inc({ outcome: out.status === 'failed' ? 'retry' : 'dead' });
            if (out.retry) await ctx.routeRun(out.retry);
            return { retryRunId: out.retry ? String(out.retry.runId) : '' };
          }),
          true,
          ref,
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
        done(
          heartbeatRun(ctx.answerDb, ref, progress, checkpoint).then(() => ({})),
          false,
          ref,
        );
        return;
      }
      default:
        throw invalidArgument('msg', req.msg === 'subscribe' ? 'subscribe may only be sent once' : 'one of complete, fail or heartbeat is required');
    }
  } catch (err) {
    const s = toStatus(err, ctx.log);
    ack({ runId: runIdText, code: s.code, message: s.details });
  }
}
