/**
 * Validation of the Workflows RPCs' input. A step's job fields are checked
 * by the very rules of ScheduleRequest (validate.ts: queue, payload,
 * priority, delivery, retry, lease), with field names such as
 * "definition.steps[3].queue"; the graph by daemon/workflows/definition.ts.
 * Every refusal is INVALID_ARGUMENT naming the field.
 */
import { invalidArgument } from '../errors.js';
import type { WorkflowDefinition__Output } from '../../proto/gen/timelane/v1/WorkflowDefinition.js';
import type { StartWorkflowRequest__Output } from '../../proto/gen/timelane/v1/StartWorkflowRequest.js';
import type { ListWorkflowRunsRequest__Output } from '../../proto/gen/timelane/v1/ListWorkflowRunsRequest.js';
import type { WorkflowRunState } from '../db/queries/workflows.js';
import { orderSteps, WORKFLOW_NAME_RE, type StepSpec, type StepTrigger, type WorkflowSpec } from '../workflows/definition.js';
import type { ListWorkflowRunsFilter, StartInput } from '../workflows/workflow-service.js';
import { DEFAULT_RETRY, MAX_EPOCH_MS, NAMESPACE_RE, dueTime, jobId, pageSize, scheduleInput, type Limits } from './validate.js';
import { recurrenceInput } from './recurrence-input.js';
import type { RecurringInput } from '../recurring/recurring-service.js';
import { scheduledStartPayload, workflowRunIdOf, WORKFLOW_START_QUEUE } from '../workflows/scheduled-starts.js';

/** Most steps in flight a run may be limited to. */
const MAX_IN_FLIGHT = 10_000;
/** Largest output a Complete may carry for a workflow step. */
export const MAX_OUTPUT_BYTES = 65_536;

export function namespace(field: string, v: string): string {
  const ns = v || 'default';
  if (!NAMESPACE_RE.test(ns)) throw invalidArgument(field, `must be 1..64 chars of [A-Za-z0-9_.-] (got "${ns.slice(0, 80)}")`);
  return ns;
}

function workflowName(field: string, v: string): string {
  if (!v) throw invalidArgument(field, 'is required');
  if (!WORKFLOW_NAME_RE.test(v)) throw invalidArgument(field, `must be 1..128 chars of [A-Za-z0-9_.:-] (got "${v.slice(0, 140)}")`);
  return v;
}

function maxInFlight(field: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > MAX_IN_FLIGHT) throw invalidArgument(field, `must be between 0 and ${MAX_IN_FLIGHT} (got ${v})`);
  return v;
}

const TRIGGERS: Record<string, StepTrigger> = { STEP_TRIGGER_UNSPECIFIED: 'all_success', TRIGGER_ALL_SUCCESS: 'all_success', TRIGGER_ALL_DONE: 'all_done' };

function stepTrigger(field: string, step: string, v: unknown): StepTrigger {
  const t = typeof v === 'string' ? TRIGGERS[v] : undefined;
  if (!t) throw invalidArgument(field, `step "${step.slice(0, 140)}": unknown trigger ${String(v).slice(0, 40)} (TRIGGER_ALL_SUCCESS or TRIGGER_ALL_DONE)`);
  return t;
}

/** A definition from the wire: every step's job fields, then the graph. */
export function workflowDefinition(field: string, d: WorkflowDefinition__Output | null | undefined, nowMs: number, limits: Limits): WorkflowSpec {
  if (!d) throw invalidArgument(field, 'is required');
  const name = workflowName(`${field}.name`, d.name);
  const steps: StepSpec[] = d.steps.map((s, i) => {
    const p = `${field}.steps[${i}].`;
    const job = scheduleInput(
      { namespace: 'default', queue: s.queue, payload: s.payload, when: 'now', now: true, priority: s.priority, dedupeKey: '', delivery: s.delivery, retry: s.retry, leaseMs: s.leaseMs },
      nowMs,
      limits,
      p,
    );
    return {
      name: s.name,
      queue: job.queue,
      payload: job.payload,
      priority: job.priority,
      delivery: job.delivery,
      maxAttempts: job.maxAttempts,
      initialBackoffMs: job.initialBackoffMs,
      maxBackoffMs: job.maxBackoffMs,
      leaseMs: job.leaseMs,
      after: [...s.after],
      trigger: stepTrigger(`${p}trigger`, s.name, s.trigger),
    };
  });
  const ordered = orderSteps(`${field}.steps`, steps);
  return { name, maxInFlight: maxInFlight(`${field}.max_in_flight`, d.maxInFlight), steps: ordered };
}

/** A recurring start: the recurring job whose occurrences start workflow runs, and the definition it names. */
export interface ScheduledStartInput {
  job: RecurringInput;
  namespace: string;
  name: string;
  version: number;
}

/** A stored definition's version: 0 (the latest) or one Postgres's integer column can hold. */
function workflowVersion(field: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 2_147_483_647) throw invalidArgument(field, `must be 0 (the latest) .. 2147483647 (got ${v})`);
  return v;
}

/** StartWorkflow: one run now (or at an instant), or a recurring start. */
export function startOrSchedule(req: StartWorkflowRequest__Output, nowMs: number, limits: Limits): { start: StartInput } | { schedule: ScheduledStartInput } {
  if (req.when !== 'recurrence') return { start: startInput(req, nowMs, limits) };
  const ns = namespace('namespace', req.namespace);
  if (req.definition !== 'ref' || !req.ref) throw invalidArgument('recurrence', 'a recurring start needs a stored definition (ref: PutWorkflow it first), not an inline one');
  if (req.dedupeKey) throw invalidArgument('dedupe_key', 'is for a single start; each occurrence of a recurring start makes one run already');
  const name = workflowName('ref.name', req.ref.name);
  workflowVersion('ref.version', req.ref.version);
  const recurrence = recurrenceInput('', req.recurrence ?? { startAtMs: '0', endAtMs: '0', jitterMs: 0, limit: 0, overlap: 'OVERLAP_UNSPECIFIED', catchUp: null, pauseOnFailure: false }, nowMs);
  if (req.recurrence?.overlap === 'OVERLAP_UNSPECIFIED') recurrence.overlap = 'allow_all'; // the start runs end at once; see the proto
  const max = maxInFlight('max_in_flight', req.maxInFlight);
  return {
    schedule: {
      namespace: ns,
      name,
      version: req.ref.version,
      job: {
        namespace: ns,
        queue: WORKFLOW_START_QUEUE,
        payload: scheduledStartPayload({ namespace: ns, name, version: req.ref.version, maxInFlight: max }),
        dueAtMs: 0,
        priority: 0,
        dedupeKey: null,
        delivery: 'at_least_once',
        maxAttempts: DEFAULT_RETRY.maxAttempts,
        initialBackoffMs: DEFAULT_RETRY.initialBackoffMs,
        maxBackoffMs: DEFAULT_RETRY.maxBackoffMs,
        leaseMs: limits.defaultLeaseMs,
        recurrence,
      },
    },
  };
}

/** One start (StartWorkflow, or one of StartWorkflows' with `p` = "starts[i]."). */
export function startInput(req: StartWorkflowRequest__Output, nowMs: number, limits: Limits, p = ''): StartInput {
  const ns = namespace(`${p}namespace`, req.namespace);
  let definition: StartInput['definition'];
  if (req.definition === 'inline') definition = { inline: workflowDefinition(`${p}inline`, req.inline, nowMs, limits) };
  else if (req.definition === 'ref' && req.ref) definition = { name: workflowName(`${p}ref.name`, req.ref.name), version: workflowVersion(`${p}ref.version`, req.ref.version) };
  else throw invalidArgument(`${p}definition`, 'one of inline or ref is required');
  const startAtMs = req.when ? dueTime(p, req, nowMs, 'at_ms, delay_ms, now or recurrence') : Math.floor(nowMs);
  if (req.dedupeKey.length > 256) throw invalidArgument(`${p}dedupe_key`, `must be at most 256 chars (got ${req.dedupeKey.length})`);
  // The run's id derives from the key: a second start with it finds the first run.
  const id = req.dedupeKey ? workflowRunIdOf(`dedupe:${ns}:${req.dedupeKey}`) : undefined;
  return { id, namespace: ns, definition, startAtMs, maxInFlight: maxInFlight(`${p}max_in_flight`, req.maxInFlight) };
}

/** Most starts in one StartWorkflows call. */
export const MAX_STARTS = 1_000;

/** StartWorkflows: each start validated on its own (a recurring start is refused: it is StartWorkflow's). */
export function startInputs(starts: readonly StartWorkflowRequest__Output[], nowMs: number, limits: Limits, namespaceOf: (given: string, field: string) => string): StartInput[] {
  if (starts.length < 1 || starts.length > MAX_STARTS) throw invalidArgument('starts', `must hold 1..${MAX_STARTS} starts (got ${starts.length})`);
  return starts.map((s, i) => {
    const p = `starts[${i}].`;
    if (s.when === 'recurrence') throw invalidArgument(`${p}recurrence`, 'a recurring start is made with StartWorkflow, not in a batch');
    return startInput({ ...s, namespace: namespaceOf(s.namespace, `${p}namespace`) }, nowMs, limits, p);
  });
}

export function workflowRunId(field: string, v: string): string {
  return jobId(field, v); // a UUID, as job ids
}

const STATE: Record<string, WorkflowRunState | null> = {
  WORKFLOW_RUN_STATE_UNSPECIFIED: null,
  WORKFLOW_RUNNING: 'running',
  WORKFLOW_SUCCEEDED: 'succeeded',
  WORKFLOW_FAILED: 'failed',
  WORKFLOW_CANCELLED: 'cancelled',
};

export function listFilter(req: ListWorkflowRunsRequest__Output): ListWorkflowRunsFilter {
  if (typeof req.state !== 'string' || !(req.state in STATE)) throw invalidArgument('state', `unknown enum value ${String(req.state)}`);
  let after: ListWorkflowRunsFilter['after'] = null;
  if (req.pageToken) {
    const m = /^(\d{1,16}):([0-9a-f-]{36})$/.exec(req.pageToken);
    if (!m || Number(m[1]) > MAX_EPOCH_MS) throw invalidArgument('page_token', 'is not a token this server issued');
    after = { createdAtMs: Number(m[1]), id: workflowRunId('page_token', m[2]) };
  }
  return {
    namespace: req.namespace ? namespace('namespace', req.namespace) : null,
    name: req.name ? workflowName('name', req.name) : null,
    state: STATE[req.state],
    after,
    limit: pageSize('page_size', req.pageSize),
  };
}

export function stepNames(field: string, v: readonly string[]): string[] {
  if (v.length > 1000) throw invalidArgument(field, `must name at most 1000 steps (got ${v.length})`);
  v.forEach((s, i) => {
    if (!s) throw invalidArgument(`${field}[${i}]`, 'must be a step name');
  });
  return [...v];
}
