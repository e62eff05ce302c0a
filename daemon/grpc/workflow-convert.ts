/** Workflow rows → wire. Enum names follow the proto; int64 go out as strings. */
import type { StepRow, WorkflowRunRow } from '../db/queries/workflows.js';
import type { WorkflowRun } from '../../proto/gen/timelane/v1/WorkflowRun.js';
import type { WorkflowStepStatus } from '../../proto/gen/timelane/v1/WorkflowStepStatus.js';

const RUN_STATE = { running: 'WORKFLOW_RUNNING', succeeded: 'WORKFLOW_SUCCEEDED', failed: 'WORKFLOW_FAILED', cancelled: 'WORKFLOW_CANCELLED' } as const;
const STEP_STATE = {
  pending: 'STEP_PENDING',
  ready: 'STEP_READY',
  running: 'STEP_RUNNING',
  succeeded: 'STEP_SUCCEEDED',
  failed: 'STEP_FAILED',
  upstream_failed: 'STEP_UPSTREAM_FAILED',
  cancelled: 'STEP_CANCELLED',
} as const;

const i64 = (n: number | null | undefined): string => String(n ?? 0);

export function workflowRunToWire(w: WorkflowRunRow): WorkflowRun {
  return {
    id: w.id,
    namespace: w.namespace,
    name: w.name,
    version: w.version,
    state: RUN_STATE[w.state],
    shard: w.shard,
    maxInFlight: w.max_in_flight,
    startAtMs: i64(w.start_at_ms),
    createdAtMs: i64(w.created_at_ms),
    finishedAtMs: i64(w.finished_at_ms),
    retries: w.retries,
    stepsTotal: w.steps_total,
    stepsSucceeded: w.steps_succeeded,
    stepsFailed: w.steps_failed,
  };
}

export function stepToWire(s: StepRow, withOutput: boolean): WorkflowStepStatus {
  return {
    name: s.step,
    state: STEP_STATE[s.state],
    after: s.parents,
    queue: s.queue,
    generation: s.generation,
    attempts: s.attempts,
    jobId: s.job_id ?? '',
    runId: s.run_id === null ? '' : String(s.run_id),
    readyAtMs: i64(s.ready_at_ms),
    startedAtMs: i64(s.started_at_ms),
    firedAtMs: i64(s.fired_at_ms),
    finishedAtMs: i64(s.finished_at_ms),
    lagMs: s.lag_ms ?? 0,
    error: s.error ?? '',
    outputBytes: s.output_bytes,
    output: withOutput && s.output ? s.output : undefined,
    trigger: s.trigger === 'all_done' ? 'TRIGGER_ALL_DONE' : 'TRIGGER_ALL_SUCCESS',
  };
}
