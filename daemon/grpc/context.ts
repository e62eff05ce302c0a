/** What the gRPC handlers need from the daemon, as one narrow interface. */
import type { Metadata } from '@grpc/grpc-js';
import type { Db } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { SchedulingService } from '../scheduling/scheduling-service.js';
import type { NamespaceQuotas } from '../scheduling/quotas.js';
import type { RecurringService } from '../recurring/recurring-service.js';
import type { DeliveryHub } from '../dispatch/delivery-hub.js';
import type { Limits } from './validate.js';
import type { Member } from '../../proto/gen/timelane/v1/Member.js';
import type { ShardInfo } from '../../proto/gen/timelane/v1/ShardInfo.js';
import type { ClusterOperations } from '../cluster/operations.js';
import type { Answers } from '../dispatch/answers.js';
import type { WorkflowService } from '../workflows/workflow-service.js';
import type { RunTracing } from '../tracing/run-tracing.js';

export interface ApiContext {
  /** The API pool: client reads and writes; never used by leases, claims or answers. */
  db: Db;
  /** This daemon's member id (told to workers in Subscribed). */
  memberId: string;
  /** Worker answers and hand-off records, on the engine's answer pool. */
  answers: Answers;
  log: Logger;
  metrics: Metrics;
  limits: Limits;
  wallNow(): number;
  scheduling: SchedulingService;
  /** Whether a call's identity is still admitted (credentials file re-read since it began). */
  stillAdmitted(metadata: Metadata): boolean;
  /** Per-namespace quotas, checked before a schedule writes anything. */
  quotas: NamespaceQuotas;
  /** Recurring jobs and their verbs. */
  recurring: RecurringService;
  /** Workflow definitions and runs. */
  workflows: WorkflowService;
  hub: DeliveryHub;
  /** Spans of Schedule calls and of worker streams; null when traces are not exported. */
  tracing: RunTracing | null;
  /** A run was cancelled; drop it from memory if it is ours. */
  forgetRun(runId: number): void;
  /**
   * Queue limits were changed through this daemon: re-read them now, so they
   * apply here when the call returns (other daemons re-read every second).
   * Never rejects, and waits a bounded time: the change is committed, and
   * the periodic re-read applies it if this one fails or is slow.
   */
  onLimitsChanged(): Promise<void>;
  /** A worker stream closed (its unanswered deliveries were expired): redeliver them now. */
  onStreamClosed(): void;
  listShards(): Promise<ShardInfo[]>;
  listMembers(): Promise<Member[]>;
  /** Operator moves; null without a cluster (no Redis). */
  ops(): ClusterOperations | null;
}
