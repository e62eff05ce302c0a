/** Workflows: client inputs → wire, wire → plain shapes. */
import type { WorkflowDefinition } from '../proto/gen/timelane/v1/WorkflowDefinition.js';
import type { WorkflowRun__Output } from '../proto/gen/timelane/v1/WorkflowRun.js';
import type { WorkflowStepStatus__Output } from '../proto/gen/timelane/v1/WorkflowStepStatus.js';
import type { StartWorkflowRequest } from '../proto/gen/timelane/v1/StartWorkflowRequest.js';
import type { WorkflowRunState } from '../proto/gen/timelane/v1/WorkflowRunState.js';
import type { StepTrigger } from '../proto/gen/timelane/v1/StepTrigger.js';
import { deliveryToWire, int64, payloadBytes, retryToWire, whenFields } from './convert.js';
import { wholeNumber } from './wire-numbers.js';
import { recurrenceToWire } from './recurrence.js';
import type {
  ScheduleWorkflowInput,
  StartWorkflowInput,
  StepStateName,
  StepTriggerName,
  WorkflowDefinitionInput,
  WorkflowRunInfo,
  WorkflowRunStateName,
  WorkflowStepInfo,
} from './workflow-types.js';

const RUN_STATE: Record<string, WorkflowRunStateName> = {
  WORKFLOW_RUNNING: 'running',
  WORKFLOW_SUCCEEDED: 'succeeded',
  WORKFLOW_FAILED: 'failed',
  WORKFLOW_CANCELLED: 'cancelled',
};
const STEP_STATE: Record<string, StepStateName> = {
  STEP_PENDING: 'pending',
  STEP_READY: 'ready',
  STEP_RUNNING: 'running',
  STEP_SUCCEEDED: 'succeeded',
  STEP_FAILED: 'failed',
  STEP_UPSTREAM_FAILED: 'upstream_failed',
  STEP_CANCELLED: 'cancelled',
};

export function runStateToWire(s: WorkflowRunStateName | undefined): WorkflowRunState {
  if (s === undefined || s === 'unspecified') return 'WORKFLOW_RUN_STATE_UNSPECIFIED';
  const wire = Object.entries(RUN_STATE).find(([, v]) => v === s)?.[0];
  if (!wire) throw new RangeError(`state: unknown workflow run state "${String(s)}"`);
  return wire as WorkflowRunState;
}

export function definitionToWire(d: WorkflowDefinitionInput): WorkflowDefinition {
  if (!d || typeof d !== 'object' || !Array.isArray(d.steps)) throw new TypeError('definition: must be an object with a name and a steps array');
  return {
    name: text('name', d.name),
    maxInFlight: wholeNumber('maxInFlight', d.maxInFlight),
    steps: d.steps.map((s, i) => {
      const at = `steps[${i}]`;
      if (!s || typeof s !== 'object') throw new TypeError(`${at}: must be an object with a name and a queue`);
      return {
        name: text(`${at}.name`, s.name),
        queue: text(`${at}.queue`, s.queue),
        payload: payloadBytes(s.payload),
        after: afterToWire(`${at}.after`, s.after),
        priority: wholeNumber(`${at}.priority`, s.priority, 'int32'),
        delivery: deliveryToWire(`${at}.delivery`, s.delivery) ?? 'AT_LEAST_ONCE',
        retry: retryToWire(s.retry, `${at}.retry`),
        leaseMs: wholeNumber(`${at}.leaseMs`, s.leaseMs),
        trigger: triggerToWire(s.trigger, i),
      };
    }),
  };
}

/*
 * A definition often comes from a JSON file (`workflow put --file`): a field
 * of the wrong type is refused here naming it, where the encoder would throw
 * an unnamed error or quietly coerce it.
 */
function text(field: string, value: string): string {
  if (typeof value !== 'string') throw new TypeError(`${field}: must be a string (got ${JSON.stringify(value) ?? 'nothing'})`);
  return value;
}

function afterToWire(field: string, after: readonly string[] | undefined): string[] {
  if (after === undefined || after === null) return [];
  if (!Array.isArray(after) || after.some((a) => typeof a !== 'string')) throw new TypeError(`${field}: must be an array of step names (got ${JSON.stringify(after)})`);
  return [...after];
}

const TRIGGER: Record<StepTriggerName, StepTrigger> = { all_success: 'TRIGGER_ALL_SUCCESS', all_done: 'TRIGGER_ALL_DONE' };

/** A step's trigger; a name that is neither is refused here (a typo must not quietly become all_success). */
function triggerToWire(t: StepTriggerName | undefined, i: number): StepTrigger {
  if (t === undefined) return 'STEP_TRIGGER_UNSPECIFIED';
  const wire = TRIGGER[t] as StepTrigger | undefined;
  if (!wire) throw new TypeError(`steps[${i}].trigger: must be "all_success" or "all_done" (got ${JSON.stringify(t)})`);
  return wire;
}

export function startRequest(input: StartWorkflowInput): StartWorkflowRequest {
  if ((input.definition === undefined) === (input.workflow === undefined)) throw new TypeError('definition, workflow: give exactly one');
  const def = input.definition ? { inline: definitionToWire(input.definition) } : { ref: { name: input.workflow, version: wholeNumber('version', input.version) } };
  return { namespace: input.namespace ?? '', ...def, ...whenFields(input.at, input.delayMs), maxInFlight: wholeNumber('maxInFlight', input.maxInFlight), dedupeKey: input.dedupeKey ?? '' };
}

export function scheduleRequest(input: ScheduleWorkflowInput): StartWorkflowRequest {
  if (!input.workflow) throw new TypeError('workflow: a stored definition is required for a recurring start');
  return {
    namespace: input.namespace ?? '',
    ref: { name: input.workflow, version: wholeNumber('version', input.version) },
    recurrence: recurrenceToWire(input.recurrence),
    maxInFlight: wholeNumber('maxInFlight', input.maxInFlight),
  };
}

export function workflowRunInfo(w: WorkflowRun__Output | null): WorkflowRunInfo {
  if (!w) throw new Error('timelane: response without a workflow run');
  return {
    id: w.id,
    namespace: w.namespace,
    name: w.name,
    version: w.version,
    state: RUN_STATE[w.state] ?? 'unspecified',
    shard: w.shard,
    maxInFlight: w.maxInFlight,
    startAtMs: int64(w.startAtMs),
    createdAtMs: int64(w.createdAtMs),
    finishedAtMs: int64(w.finishedAtMs),
    retries: w.retries,
    stepsTotal: w.stepsTotal,
    stepsSucceeded: w.stepsSucceeded,
    stepsFailed: w.stepsFailed,
  };
}

export function workflowStepInfo(s: WorkflowStepStatus__Output): WorkflowStepInfo {
  return {
    name: s.name,
    state: STEP_STATE[s.state] ?? 'unspecified',
    after: s.after,
    trigger: s.trigger === 'TRIGGER_ALL_DONE' ? 'all_done' : 'all_success',
    queue: s.queue,
    generation: s.generation,
    attempts: s.attempts,
    jobId: s.jobId,
    runId: s.runId,
    readyAtMs: int64(s.readyAtMs),
    startedAtMs: int64(s.startedAtMs),
    firedAtMs: int64(s.firedAtMs),
    finishedAtMs: int64(s.finishedAtMs),
    lagMs: Number(s.lagMs),
    error: s.error,
    outputBytes: s.outputBytes,
    output: s.output && s.output.length > 0 ? s.output : null,
  };
}
