/**
 * A recurring workflow start (daemon/workflows/scheduled-starts.ts): the run
 * of a schedule's occurrence starts one workflow run, then is completed. A
 * start that fails fails its run (a retry, or dead when it cannot get
 * better); a start that succeeded is never failed because its Complete was
 * not written (Postgres away, the row locked for long): that would spend an
 * attempt, or kill the run and pause the schedule, for a workflow run that
 * exists. The lease hands the run out again; the start, idempotent, finds it.
 *
 * The sink's collaborators are stand-ins for the daemon's own parts (hub,
 * answers, workflow service); Postgres plays no part in this decision.
 */
import { describe, expect, it, vi } from 'vitest';
import type { FiredRunRow } from '../../daemon/db/queries/columns.js';
import type { Answers } from '../../daemon/dispatch/answers.js';
import type { DeliveryHub, WorkerSink } from '../../daemon/dispatch/delivery-hub.js';
import { notFound, unavailable } from '../../daemon/errors.js';
import type { Logger } from '../../daemon/log.js';
import { ScheduledStarts, scheduledStartPayload, WORKFLOW_START_QUEUE } from '../../daemon/workflows/scheduled-starts.js';
import type { WorkflowService } from '../../daemon/workflows/workflow-service.js';
import { firedRunRow } from '../helpers/fired-run.js';

const run: FiredRunRow = firedRunRow(41, {
  queue: WORKFLOW_START_QUEUE,
  nominal_at_ms: 1_700_000_000_000,
  origin: 'schedule',
  idempotency_key: 'job-41@1700000000000',
  payload: scheduledStartPayload({ namespace: 'default', name: 'nightly', version: 0, maxInFlight: 0 }),
});

function harness(start: () => Promise<{ id: string }>, completeError: Error | null) {
  let sink: WorkerSink | undefined;
  const hub = { register: (s: WorkerSink) => (sink = s), unregister: () => undefined, settle: () => undefined };
  const answers = { complete: vi.fn(async () => [completeError]), fail: vi.fn(async () => ({ status: 'failed', retry: null })) };
  const log = { info: vi.fn(), warn: vi.fn() };
  const starts = new ScheduledStarts({
    hub: hub as unknown as DeliveryHub,
    answers: answers as unknown as Answers,
    workflows: { start } as unknown as WorkflowService,
    log: log as unknown as Logger,
  });
  starts.start();
  return {
    answers,
    log,
    async deliver(): Promise<void> {
      sink!.send(run, Date.now());
      await starts.stop(); // waits for the start in flight
    },
  };
}

describe('ScheduledStarts', () => {
  it('a started workflow run whose Complete is not written does not fail its run', async () => {
    const h = harness(async () => ({ id: 'wf-1' }), unavailable('run 41: its row has been held by another transaction for 10000 ms'));
    await h.deliver();
    // Before: the Complete's error was taken for a failed start, and the run failed (an attempt spent).
    expect(h.answers.fail).not.toHaveBeenCalled();
    expect(h.log.warn).toHaveBeenCalledWith(expect.objectContaining({ runId: 41, workflowRunId: 'wf-1' }), 'scheduled workflow run started; its Complete was not written');
  });

  it('a start that fails fails its run: dead when it cannot get better', async () => {
    const h = harness(async () => Promise.reject(notFound('workflow definition nightly')), null);
    await h.deliver();
    expect(h.answers.complete).not.toHaveBeenCalled();
    expect(h.answers.fail).toHaveBeenCalledWith(expect.objectContaining({ runId: 41 }), false, expect.stringMatching(/could not start the scheduled workflow run/));
  });
});
