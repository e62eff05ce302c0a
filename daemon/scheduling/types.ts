/** Inputs and results of scheduling, shared by the service, the batch write path and the gRPC layer. */
import type { Db } from '../db/pool.js';
import type { DeliveryMode, RunStatus } from '../db/queries/columns.js';
import type { RunRouter } from '../engine/router.js';
import type { Recurrence } from '../recurring/recurrence.js';

/** One validated schedule request (grpc/validate.ts makes these). */
export interface ScheduleInput {
  namespace: string;
  queue: string;
  payload: Buffer;
  dueAtMs: number;
  priority: number;
  dedupeKey: string | null;
  delivery: DeliveryMode;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  leaseMs: number;
  /** A recurring job's rule (dueAtMs is then unused); null for a one-shot job. */
  recurrence: Recurrence | null;
}

/** What scheduling reports about one request: references, never the payload. */
export interface Scheduled {
  job: { id: string; shard: number; delivery: DeliveryMode };
  /** The job's first run. */
  run: ScheduledRun;
  /** The dedupe key matched an existing job (or an earlier request of the batch); nothing was created for it. */
  deduplicated: boolean;
}

export interface ScheduledRun {
  id: number;
  job_id: string;
  shard: number;
  priority: number;
  status: RunStatus;
  due_at_ms: number;
}

/** Like Scheduled, for any job: a recurring job's first occurrence may not be a run yet. */
export interface ScheduledJob extends Omit<Scheduled, 'run'> {
  run: ScheduledRun | null;
}

export interface ScheduledBatch {
  /** One per request, in request order. */
  scheduled: Scheduled[];
  /** The batch key matched a committed batch: nothing was applied, `scheduled` describes that batch. */
  replayed: boolean;
}

export interface SchedulingDeps {
  db: Db;
  schema: string;
  shardCount: number;
  /** Where every committed run goes: the local engine, or a notify to its shard's owner. */
  router: RunRouter;
}
