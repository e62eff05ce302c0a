/** Plain shapes of the Workflows API, as the client library takes and returns them. */
import type { DeliveryModeName, PayloadInput, RecurrenceInput, RetryPolicyInput } from './types.js';

export type { WorkflowStepDeliveryInfo } from './types.js';

/** One step of a definition: a job made when every step in `after` succeeded. */
export interface WorkflowStepInput {
  /** Unique within the definition; 1..128 chars of [A-Za-z0-9_.:-]. */
  name: string;
  queue: string;
  payload?: PayloadInput;
  /** Parents: names of steps this one runs after. */
  after?: string[];
  priority?: number;
  delivery?: DeliveryModeName;
  retry?: RetryPolicyInput;
  leaseMs?: number;
  /**
   * When the step runs: `all_success` (default) once every parent succeeded
   * (a parent that did not makes it upstream_failed); `all_done` once every
   * parent ended, whatever the outcome (a cleanup step; needs parents).
   */
  trigger?: StepTriggerName;
}

export type StepTriggerName = 'all_success' | 'all_done';

/** A workflow definition (also the JSON of `timelane workflow start --file`). */
export interface WorkflowDefinitionInput {
  name: string;
  steps: WorkflowStepInput[];
  /** Most steps of one run running at once; 0 or absent = no limit. */
  maxInFlight?: number;
}

export interface StartWorkflowInput {
  namespace?: string;
  /** An inline definition; or name a stored one with `workflow` (and `version`, default the latest). */
  definition?: WorkflowDefinitionInput;
  workflow?: string;
  version?: number;
  /** When the root steps are due; none of `at`/`delayMs` means now. */
  at?: Date | number;
  delayMs?: number;
  /** Overrides the definition's maxInFlight. */
  maxInFlight?: number;
  /** Makes the call idempotent within the namespace: a second start with this key returns the first run. */
  dedupeKey?: string;
}

/** A recurring start: each occurrence of `recurrence` starts one run of a stored definition. */
export interface ScheduleWorkflowInput {
  namespace?: string;
  workflow: string;
  /** Default 0: the latest version at each occurrence. */
  version?: number;
  maxInFlight?: number;
  /** As for a recurring job (overlap defaults to allow_all here). */
  recurrence: RecurrenceInput;
}

export type WorkflowRunStateName = 'unspecified' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type StepStateName = 'unspecified' | 'pending' | 'ready' | 'running' | 'succeeded' | 'failed' | 'upstream_failed' | 'cancelled';

export interface WorkflowRunInfo {
  id: string;
  namespace: string;
  name: string;
  /** 0: started with an inline definition. */
  version: number;
  state: WorkflowRunStateName;
  shard: number;
  maxInFlight: number;
  startAtMs: number;
  createdAtMs: number;
  /** 0 while running. */
  finishedAtMs: number;
  retries: number;
  stepsTotal: number;
  stepsSucceeded: number;
  /** failed, upstream_failed or cancelled. */
  stepsFailed: number;
}

export interface WorkflowStepInfo {
  name: string;
  state: StepStateName;
  after: string[];
  trigger: StepTriggerName;
  queue: string;
  /** Times started (a partial re-run starts a step again). */
  generation: number;
  /** Attempts of the current generation. */
  attempts: number;
  jobId: string;
  runId: string;
  readyAtMs: number;
  startedAtMs: number;
  firedAtMs: number;
  finishedAtMs: number;
  /** Fire lag of the latest run (fired − due). */
  lagMs: number;
  error: string;
  outputBytes: number;
  /** Only with getWorkflowRun(id, { outputs: true }). */
  output: Buffer | null;
}

export interface WorkflowRunWithSteps {
  run: WorkflowRunInfo;
  /** In topological order. */
  steps: WorkflowStepInfo[];
}

export interface ListWorkflowRunsInput {
  namespace?: string;
  name?: string;
  state?: Exclude<WorkflowRunStateName, 'unspecified'>;
  pageSize?: number;
  pageToken?: string;
}

export interface WorkflowRunPage {
  runs: WorkflowRunInfo[];
  nextPageToken: string;
}
