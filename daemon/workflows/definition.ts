/**
 * Workflow definitions: the validated shape of a DAG of steps, its checks
 * (duplicate names, edges to unknown steps, self-edges, cycles, trigger
 * rules), its topological order, and the form it is stored in
 * (workflow_definitions).
 *
 * Pure: no I/O. Every refusal is INVALID_ARGUMENT naming the field and the
 * offending steps, so a bad definition never reaches the database.
 */
import { invalidArgument } from '../errors.js';
import type { DeliveryMode } from '../db/queries/columns.js';

/** Most steps in one workflow. */
export const MAX_STEPS = 1_000;
/** Most parents of one step. */
export const MAX_PARENTS = 100;
export const STEP_NAME_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
export const WORKFLOW_NAME_RE = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * A step's trigger rule (after Airflow's): what its parents must have done
 * for it to run. `all_success`: every parent succeeded — one that fails, is
 * cancelled or upstream-failed makes the step upstream_failed (it never
 * runs). `all_done`: every parent ended, whatever the outcome — a cleanup
 * step; never upstream_failed, and its own outcome is what its children see.
 */
export type StepTrigger = 'all_success' | 'all_done';
export const STEP_TRIGGERS: readonly StepTrigger[] = ['all_success', 'all_done'];

/** One step, as validated: what its job is made of, and its parents. */
export interface StepSpec {
  name: string;
  queue: string;
  payload: Buffer;
  priority: number;
  delivery: DeliveryMode;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  leaseMs: number;
  /** Parents: the step starts once every one of them is through, as `trigger` says. */
  after: string[];
  trigger: StepTrigger;
}

export interface WorkflowSpec {
  name: string;
  /** Most steps running at once; 0 = no limit. */
  maxInFlight: number;
  /** In topological order (parents before children; ties in definition order). */
  steps: StepSpec[];
}

/** A step with its position and children, as the run's step rows need it. */
export interface PlannedStep extends StepSpec {
  position: number;
  children: string[];
}

/**
 * Checks the graph of `steps` (field names use `field`, e.g.
 * "definition.steps") and returns the steps in topological order. Throws
 * INVALID_ARGUMENT naming: duplicate names, unknown or repeated parents,
 * self-edges, and the steps of a cycle.
 */
export function orderSteps(field: string, steps: readonly StepSpec[]): StepSpec[] {
  if (steps.length === 0) throw invalidArgument(field, 'must hold at least one step');
  if (steps.length > MAX_STEPS) throw invalidArgument(field, `must hold at most ${MAX_STEPS} steps (got ${steps.length})`);
  const index = new Map<string, number>();
  steps.forEach((s, i) => {
    if (!STEP_NAME_RE.test(s.name)) throw invalidArgument(`${field}[${i}].name`, `must be 1..128 chars of [A-Za-z0-9_.:-] (got "${s.name.slice(0, 140)}")`);
    const first = index.get(s.name);
    if (first !== undefined) throw invalidArgument(`${field}[${i}].name`, `duplicate step name "${s.name}" (also ${field}[${first}])`);
    index.set(s.name, i);
  });
  steps.forEach((s, i) => {
    if (!STEP_TRIGGERS.includes(s.trigger)) throw invalidArgument(`${field}[${i}].trigger`, `step "${s.name}": unknown trigger "${String(s.trigger).slice(0, 40)}"`);
    if (s.trigger !== 'all_success' && s.after.length === 0)
      throw invalidArgument(`${field}[${i}].trigger`, `step "${s.name}" has no parents: a root step runs when its workflow run starts, so ${s.trigger} means nothing (name its parents in after)`);
    if (s.after.length > MAX_PARENTS) throw invalidArgument(`${field}[${i}].after`, `must name at most ${MAX_PARENTS} steps (got ${s.after.length})`);
    const seen = new Set<string>();
    s.after.forEach((p, k) => {
      if (p === s.name) throw invalidArgument(`${field}[${i}].after[${k}]`, `step "${s.name}" cannot run after itself`);
      if (!index.has(p)) throw invalidArgument(`${field}[${i}].after[${k}]`, `step "${s.name}" runs after unknown step "${p.slice(0, 140)}"`);
      if (seen.has(p)) throw invalidArgument(`${field}[${i}].after[${k}]`, `step "${s.name}" names "${p}" twice`);
      seen.add(p);
    });
  });
  // Kahn's algorithm, taking ready steps in definition order.
  const waiting = steps.map((s) => s.after.length);
  const children = steps.map(() => [] as number[]);
  steps.forEach((s, i) => s.after.forEach((p) => children[index.get(p) as number].push(i)));
  const ordered: StepSpec[] = [];
  const ready = steps.map((_, i) => i).filter((i) => waiting[i] === 0);
  while (ready.length > 0) {
    ready.sort((a, b) => a - b);
    const i = ready.shift() as number;
    ordered.push(steps[i]);
    for (const c of children[i]) if (--waiting[c] === 0) ready.push(c);
  }
  if (ordered.length < steps.length) {
    const cycle = findCycle(steps, index, new Set(ordered.map((s) => s.name)));
    throw invalidArgument(field, `the steps form a cycle: ${cycle.join(' → ')}`);
  }
  return ordered;
}

/** One cycle among the steps Kahn's algorithm could not order, as names (first repeated at the end). */
function findCycle(steps: readonly StepSpec[], index: Map<string, number>, ordered: Set<string>): string[] {
  // Walk parent edges from an unordered step: every unordered step has an unordered parent, so the walk must revisit one.
  const start = steps.find((s) => !ordered.has(s.name)) as StepSpec;
  const path: string[] = [];
  const at = new Map<string, number>();
  let cur = start;
  while (!at.has(cur.name)) {
    at.set(cur.name, path.length);
    path.push(cur.name);
    const parent = cur.after.find((p) => !ordered.has(p)) as string;
    cur = steps[index.get(parent) as number];
  }
  // path holds child → parent; a cycle reads better in run order (parent → child).
  return [...path.slice(at.get(cur.name)), cur.name].reverse();
}

/** The steps in order with positions and children. */
export function planSteps(ordered: readonly StepSpec[]): PlannedStep[] {
  const children = new Map<string, string[]>(ordered.map((s) => [s.name, []]));
  for (const s of ordered) for (const p of s.after) children.get(p)?.push(s.name);
  return ordered.map((s, position) => ({ ...s, position, children: children.get(s.name) ?? [] }));
}

/** Stored form (jsonb): payloads as base64; `trigger` only when not all_success (definitions stored before triggers have none). */
interface StoredStep extends Omit<StepSpec, 'payload' | 'trigger'> {
  payload: string;
  trigger?: StepTrigger;
}
interface StoredWorkflow {
  name: string;
  maxInFlight: number;
  steps: StoredStep[];
}

export function toStored(w: WorkflowSpec): StoredWorkflow {
  return {
    name: w.name,
    maxInFlight: w.maxInFlight,
    steps: w.steps.map(({ trigger, ...s }) => ({ ...s, payload: s.payload.toString('base64'), ...(trigger === 'all_success' ? {} : { trigger }) })),
  };
}

export function fromStored(v: unknown): WorkflowSpec {
  const w = v as StoredWorkflow;
  return {
    name: w.name,
    maxInFlight: w.maxInFlight,
    steps: w.steps.map((s) => ({ ...s, payload: Buffer.from(s.payload, 'base64'), trigger: s.trigger ?? 'all_success' })),
  };
}

/** Same definition (a PutWorkflow that changes nothing makes no new version)? */
export function sameDefinition(a: WorkflowSpec, b: WorkflowSpec): boolean {
  return canonical(toStored(a)) === canonical(toStored(b));
}

/** JSON with object keys sorted (jsonb does not keep key order). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
