/**
 * Workflows: the writes and reads behind the Workflows API, independent of
 * gRPC. Durable before acknowledged. A workflow run lives on one shard (a
 * stable hash of its id), and so do its steps' jobs and runs; its root
 * steps are started in the transaction that creates it, through the same
 * transitions the answers use (step-transitions.ts), and routed inside it.
 */
import type { Db } from '../db/pool.js';
import { query, queryPrepared, transaction } from '../db/pool.js';
import {
  CANCEL_WORKFLOW_RUN,
  INSERT_DEFINITION,
  INSERT_WORKFLOW_RUNS,
  LATEST_DEFINITION,
  LIST_WORKFLOW_RUNS,
  LOCK_DEFINITION_NAME,
  LOCK_WORKFLOW_RUNS,
  RESET_STEPS,
  SELECT_DEFINITION,
  SELECT_STEPS,
  SELECT_WORKFLOW_RUN,
  SELECT_WORKFLOW_RUNS,
  type StepRow,
  type WorkflowRunRow,
  type WorkflowRunState,
} from '../db/queries/workflows.js';
import { failedPrecondition, invalidArgument, notFound } from '../errors.js';
import { shardOf } from '../shard-of.js';
import { newId } from '../ids.js';
import type { RunRouter } from '../engine/router.js';
import { fromStored, planSteps, sameDefinition, toStored, type WorkflowSpec } from './definition.js';
import { StepTransitions } from './step-transitions.js';

/** Most steps one StartWorkflows call may create (its runs' steps, all together). */
export const MAX_STEPS_PER_CALL = 100_000;

export interface WorkflowDeps {
  db: Db;
  shardCount: number;
  router: RunRouter;
  /** A cancelled run: drop it from memory if it is here. */
  forgetRun: (runId: number) => void;
}

export interface StartInput {
  /** The run's id; default a new random one. A recurring start derives it from its occurrence (at most one run each). */
  id?: string;
  namespace: string;
  definition: { inline: WorkflowSpec } | { name: string; version: number };
  startAtMs: number;
  /** Overrides the definition's limit when > 0. */
  maxInFlight: number;
}

export interface ListWorkflowRunsFilter {
  namespace: string | null;
  name: string | null;
  state: WorkflowRunState | null;
  after: { createdAtMs: number; id: string } | null;
  limit: number;
}

export class WorkflowService {
  private readonly steps: StepTransitions;

  constructor(private readonly deps: WorkflowDeps) {
    this.steps = new StepTransitions(deps.router);
  }

  /** Stores a new version of a definition (unless it equals the latest). */
  async put(namespace: string, spec: WorkflowSpec): Promise<{ version: number; unchanged: boolean }> {
    return transaction(this.deps.db, async (tx) => {
      await query(tx, LOCK_DEFINITION_NAME, [namespace, spec.name]);
      const { rows } = await query<{ version: number; definition: unknown }>(tx, LATEST_DEFINITION, [namespace, spec.name]);
      const latest = rows[0];
      if (latest && sameDefinition(fromStored(latest.definition), spec)) return { version: latest.version, unchanged: true };
      const version = (latest?.version ?? 0) + 1;
      await query(tx, INSERT_DEFINITION, [namespace, spec.name, version, JSON.stringify(toStored(spec))]);
      return { version, unchanged: false };
    });
  }

  /** Creates a workflow run and starts its root steps (due at its start time). */
  async start(input: StartInput): Promise<WorkflowRunRow> {
    return (await this.startMany([input]))[0];
  }

  /**
   * Creates workflow runs and starts their root steps, in one transaction
   * (all or none): one statement writes every run with its steps, one starts
   * every root. A run whose id exists (a dedupe key used before, a recurring
   * start's retry; or an earlier input of this call) is answered as it is.
   * Returns one run per input, in order.
   */
  async startMany(inputs: readonly StartInput[]): Promise<WorkflowRunRow[]> {
    const specs = await this.resolveMany(inputs);
    const planned = inputs.map((input, i) => {
      const { spec, version } = specs[i];
      const id = input.id ?? newId();
      return {
        id,
        input,
        spec,
        version,
        shard: shardOf(id, this.deps.shardCount),
        steps: planSteps(spec.steps),
        maxInFlight: input.maxInFlight > 0 ? input.maxInFlight : spec.maxInFlight,
      };
    });
    const total = planned.reduce((n, p) => n + p.steps.length, 0);
    if (total > MAX_STEPS_PER_CALL) throw invalidArgument('starts', `must hold at most ${MAX_STEPS_PER_CALL} steps in all (got ${total})`);
    // One insert per id: a later input with an id an earlier one has is answered with that run.
    const firstOf = new Map<string, (typeof planned)[number]>();
    for (const p of planned) if (!firstOf.has(p.id)) firstOf.set(p.id, p);
    const fresh = [...firstOf.values()];
    const stepsOf = fresh.flatMap((p, i) => p.steps.map((step) => ({ run: i + 1, step })));
    let route = (): void => undefined;
    const created = await transaction(this.deps.db, async (tx) => {
      const { rows } = await queryPrepared<{ id: string; created_at_ms: number }>(tx, 'tl_wf_insert_runs', INSERT_WORKFLOW_RUNS, [
        fresh.map((p) => p.id),
        fresh.map((p) => p.input.namespace),
        fresh.map((p) => p.spec.name),
        fresh.map((p) => p.version),
        fresh.map((p) => p.shard),
        fresh.map((p) => p.maxInFlight),
        fresh.map((p) => p.input.startAtMs),
        stepsOf.map((x) => x.run),
        stepsOf.map((x) => x.step.name),
        stepsOf.map((x) => x.step.position),
        stepsOf.map((x) => JSON.stringify(x.step.after)),
        stepsOf.map((x) => JSON.stringify(x.step.children)),
        stepsOf.map((x) => x.step.queue),
        stepsOf.map((x) => x.step.payload),
        stepsOf.map((x) => x.step.priority),
        stepsOf.map((x) => x.step.delivery),
        stepsOf.map((x) => x.step.maxAttempts),
        stepsOf.map((x) => x.step.initialBackoffMs),
        stepsOf.map((x) => x.step.maxBackoffMs),
        stepsOf.map((x) => x.step.leaseMs),
        stepsOf.map((x) => x.step.trigger),
      ]);
      // No lock: nobody else can see the new rows before this commits. Roots are routed, not fired here (see advance).
      route = await this.steps.advance(tx, rows.map((r) => r.id), null, false);
      return new Map(rows.map((r) => [r.id, r.created_at_ms]));
    });
    route();
    // Runs that existed already (a dedupe key, a retried recurring start), as they are now.
    const existing = planned.filter((p) => !created.has(p.id)).map((p) => p.id);
    const found = existing.length > 0 ? (await query<WorkflowRunRow>(this.deps.db, SELECT_WORKFLOW_RUNS, [[...new Set(existing)]])).rows : [];
    const byId = new Map(found.map((r) => [r.id, r]));
    return planned.map(({ id }) => {
      const p = firstOf.get(id)!;
      const createdAtMs = created.get(p.id);
      if (createdAtMs === undefined) {
        const run = byId.get(p.id);
        if (!run) throw notFound(`workflow run ${p.id}`); // existed at insert, deleted since: cannot happen (runs are kept)
        return run;
      }
      // What was just written (a run of only failing roots cannot have finished yet: nothing ran).
      return {
        id: p.id,
        namespace: p.input.namespace,
        name: p.spec.name,
        version: p.version,
        shard: p.shard,
        state: 'running',
        max_in_flight: p.maxInFlight,
        start_at_ms: p.input.startAtMs,
        created_at_ms: createdAtMs,
        finished_at_ms: null,
        retries: 0,
        steps_total: p.steps.length,
        steps_succeeded: 0,
        steps_failed: 0,
      };
    });
  }

  /** Throws NOT_FOUND unless the definition exists (a recurring start checks it before it is made). */
  async checkDefinition(namespace: string, name: string, version: number): Promise<void> {
    await this.resolve({ namespace, definition: { name, version }, startAtMs: 0, maxInFlight: 0 });
  }

  async getRun(id: string): Promise<WorkflowRunRow> {
    const { rows } = await query<WorkflowRunRow>(this.deps.db, SELECT_WORKFLOW_RUN, [id]);
    if (!rows[0]) throw notFound(`workflow run ${id}`);
    return rows[0];
  }

  async get(id: string): Promise<{ run: WorkflowRunRow; steps: StepRow[] }> {
    const run = await this.getRun(id);
    const { rows } = await query<StepRow>(this.deps.db, SELECT_STEPS, [id]);
    return { run, steps: rows };
  }

  async list(f: ListWorkflowRunsFilter): Promise<WorkflowRunRow[]> {
    const { rows } = await query<WorkflowRunRow>(this.deps.db, LIST_WORKFLOW_RUNS, [
      f.namespace,
      f.name,
      f.state,
      f.after?.createdAtMs ?? null,
      f.after?.id ?? null,
      f.limit,
    ]);
    return rows;
  }

  /**
   * Partial re-run of a finished workflow run: failed, cancelled and
   * upstream-failed steps, the succeeded steps named in `fromSteps`, and
   * everything downstream of them run again; other succeeded steps keep
   * their outputs and are not run again.
   */
  async retry(id: string, fromSteps: readonly string[]): Promise<{ run: WorkflowRunRow; reset: string[] }> {
    let route = (): void => undefined;
    const reset = await transaction(this.deps.db, async (tx) => {
      const { rows: locked } = await query<{ id: string; state: WorkflowRunState }>(tx, LOCK_WORKFLOW_RUNS, [[id]]);
      const w = locked[0];
      if (!w) throw notFound(`workflow run ${id}`);
      if (w.state === 'running') throw failedPrecondition(`workflow run ${id} is still running: retry it once it has finished (or cancel it first)`);
      const { rows: steps } = await query<StepRow>(tx, SELECT_STEPS, [id]);
      const byName = new Map(steps.map((s) => [s.step, s]));
      fromSteps.forEach((name, i) => {
        const s = byName.get(name);
        if (!s) throw invalidArgument(`from_steps[${i}]`, `workflow run ${id} has no step "${name.slice(0, 140)}"`);
      });
      const { rows } = await query<{ step: string }>(tx, RESET_STEPS, [id, [...fromSteps]]);
      if (rows.length === 0) throw failedPrecondition(`workflow run ${id} has nothing to re-run: every step succeeded (name steps in from_steps to run them again)`);
      route = await this.steps.advance(tx, [id], null, false);
      return rows.map((r) => r.step);
    });
    route();
    return { run: await this.getRun(id), reset };
  }

  /** Cancels a running workflow run: nothing new starts; running steps' workers are asked to stop. */
  async cancel(id: string): Promise<{ run: WorkflowRunRow; cancelled: number; cancelling: number }> {
    let route = (): void => undefined;
    const out = await transaction(this.deps.db, async (tx) => {
      await this.steps.lock(tx, [id]);
      const { rows } = await query<{ id: number | null; shard: number | null; what: 'cancelled' | 'cancelling' | 'workflow' }>(tx, CANCEL_WORKFLOW_RUN, [id]);
      if (!rows.some((r) => r.what === 'workflow')) {
        const run = await this.getRun(id); // not found → NOT_FOUND
        throw failedPrecondition(`workflow run ${id} is ${run.state}; only a running workflow run can be cancelled`);
      }
      const cancelled = rows.filter((r) => r.what === 'cancelled').map((r) => r.id as number);
      const stopping = rows.filter((r) => r.what === 'cancelling').map((r) => ({ runId: r.id as number, shard: r.shard as number }));
      const told = stopping.length > 0 ? await this.deps.router.cancelInTransaction(tx, stopping, `workflow run ${id} cancelled`) : () => undefined;
      route = () => {
        cancelled.forEach((r) => this.deps.forgetRun(r));
        told();
      };
      return { cancelled: cancelled.length, cancelling: stopping.length };
    });
    route();
    return { run: await this.getRun(id), ...out };
  }

  private async resolve(input: StartInput): Promise<{ spec: WorkflowSpec; version: number }> {
    return (await this.resolveMany([input]))[0];
  }

  /** Each input's definition: inline as given; stored ones read once per (namespace, name, version). */
  private async resolveMany(inputs: readonly StartInput[]): Promise<{ spec: WorkflowSpec; version: number }[]> {
    const stored = new Map<string, Promise<{ spec: WorkflowSpec; version: number }>>();
    const read = async (namespace: string, name: string, version: number): Promise<{ spec: WorkflowSpec; version: number }> => {
      const { rows } = await query<{ version: number; definition: unknown }>(this.deps.db, SELECT_DEFINITION, [namespace, name, version]);
      if (!rows[0]) throw notFound(version > 0 ? `workflow "${name}" version ${version}` : `workflow "${name}"`);
      return { spec: fromStored(rows[0].definition), version: rows[0].version };
    };
    return Promise.all(
      inputs.map((input) => {
        const d = input.definition;
        if ('inline' in d) return { spec: d.inline, version: 0 };
        const key = JSON.stringify([input.namespace, d.name, d.version]);
        let p = stored.get(key);
        if (!p) stored.set(key, (p = read(input.namespace, d.name, d.version)));
        return p;
      }),
    );
  }
}
