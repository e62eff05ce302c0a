/**
 * Recurring workflow starts: each occurrence of a schedule starts one
 * workflow run. A schedule is an ordinary recurring job on the reserved
 * queue WORKFLOW_START_QUEUE (so the materialiser, overlap, catch-up, pause
 * and resume all apply); its runs are consumed here, in the daemon that
 * owns their shard, by an in-process sink of the delivery hub instead of a
 * worker stream.
 *
 * States: stopped → running (registered with the hub: runs of the queue
 * arrive within CREDIT) → stopped (unregistered; starts in flight finish).
 *
 * Invariants: at most one workflow run per occurrence — its id is derived
 * from the run's idempotency key (job id + nominal time: the same on every
 * redelivery and retry of the occurrence) and creating it inserts nothing
 * if that id exists; the start run is completed only after the workflow
 * run committed, so a crash in between redelivers it and the second start
 * finds the first. A definition that no longer exists fails the run (not
 * retryable: it is dead, and `pauseOnFailure` pauses the schedule).
 */
import { createHash } from 'node:crypto';
import type { FiredRunRow } from '../db/queries/columns.js';
import type { DeliveryHub } from '../dispatch/delivery-hub.js';
import type { Answers } from '../dispatch/answers.js';
import { TimelaneError, invalidArgument } from '../errors.js';
import type { Logger } from '../log.js';
import type { WorkflowService } from './workflow-service.js';

/** The reserved queue of recurring starts (no worker should subscribe to it). */
export const WORKFLOW_START_QUEUE = 'timelane:workflow-start';
/** The sink's id in the hub: negative, so it never meets a worker stream's. */
const SINK_ID = -8;
/** Starts in flight at once. */
const CREDIT = 64;

/** What a start run's payload names. */
export interface ScheduledStartPayload {
  namespace: string;
  name: string;
  /** 0 = the latest version at each occurrence. */
  version: number;
  maxInFlight: number;
}

export function scheduledStartPayload(p: ScheduledStartPayload): Buffer {
  return Buffer.from(JSON.stringify(p), 'utf8');
}

/** A workflow run's UUID derived from a key — an occurrence's idempotency key, or a StartWorkflow dedupe key (name-based, as UUID v5 does it with SHA-1). */
export function workflowRunIdOf(key: string): string {
  const h = createHash('sha1').update(`timelane.workflow-start:${key}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export interface ScheduledStartsDeps {
  hub: DeliveryHub;
  answers: Answers;
  workflows: WorkflowService;
  log: Logger;
}

export class ScheduledStarts {
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;

  constructor(private readonly deps: ScheduledStartsDeps) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.deps.hub.register({
      id: SINK_ID,
      workerId: 'timelane:workflow-starter',
      queues: new Set([WORKFLOW_START_QUEUE]),
      credit: CREDIT,
      send: (run, sentAtMs) => {
        const p = this.handle(run, sentAtMs).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
  }

  /** Unregisters (runs not answered are redelivered by their lease) and waits for starts in flight. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.deps.hub.unregister(SINK_ID);
    await Promise.allSettled([...this.inFlight]);
  }

  private async handle(run: FiredRunRow, sentAtMs: number): Promise<void> {
    const d = { runId: run.id, shard: run.shard, fence: run.fence, deliveries: run.deliveries, sentAtMs };
    let started: { id: string };
    let name: string;
    try {
      const p = JSON.parse(run.payload.toString('utf8')) as ScheduledStartPayload;
      // The start acts in its job's namespace: a payload naming another one is refused, never obeyed.
      const namespace = run.job_namespace;
      if (p.namespace !== namespace) throw invalidArgument('payload.namespace', `a start of namespace "${namespace}" cannot start workflows of "${p.namespace}"`);
      const id = workflowRunIdOf(run.idempotency_key);
      name = p.name;
      started = await this.deps.workflows.start({
        id,
        namespace,
        definition: { name: p.name, version: p.version },
        // Root steps are due at the occurrence (its jittered due time), however late this runs.
        startAtMs: run.due_at_ms,
        maxInFlight: p.maxInFlight,
      });
    } catch (err) {
      this.deps.hub.settle(SINK_ID, run.id, run);
      // A missing definition or a bad payload will not get better: dead (pauses a schedule with pauseOnFailure).
      const retryable = !(err instanceof TimelaneError && (err.kind === 'not_found' || err.kind === 'invalid_argument')) && !(err instanceof SyntaxError);
      const message = `could not start the scheduled workflow run: ${err instanceof Error ? err.message : String(err)}`;
      this.deps.log.warn({ jobId: run.job_id, runId: run.id, err: message }, 'scheduled workflow start failed');
      await this.deps.answers.fail(d, retryable, message).catch((e: unknown) => this.deps.log.warn({ err: String(e), runId: run.id }, 'could not record a failed scheduled start'));
      return;
    }
    this.deps.hub.settle(SINK_ID, run.id, run);
    // The workflow run is started: a Complete not written (Postgres away, the row locked for long, the
    // delivery superseded) is not a failed start. The lease hands the run out again, and the start,
    // idempotent, finds its workflow run made.
    const [err] = await this.deps.answers.complete([d]);
    if (err) this.deps.log.warn({ jobId: run.job_id, runId: run.id, workflowRunId: started.id, err: err.message }, 'scheduled workflow run started; its Complete was not written');
    else this.deps.log.info({ jobId: run.job_id, workflowRunId: started.id, workflow: name }, 'scheduled workflow run started');
  }
}
