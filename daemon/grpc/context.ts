/** What the gRPC handlers need from the daemon, as one narrow interface. */
import type { Db } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { SchedulingService } from '../scheduling/scheduling-service.js';
import type { DeliveryHub } from '../dispatch/delivery-hub.js';
import type { NearDueRun } from '../slow/notifications.js';
import type { Limits } from './validate.js';
import type { Member } from '../../proto/gen/timelane/v1/Member.js';
import type { ShardInfo } from '../../proto/gen/timelane/v1/ShardInfo.js';
import type { ClusterOperations } from '../cluster/operations.js';
import type { CompleteBatcher } from '../dispatch/complete-batcher.js';

export interface ApiContext {
  db: Db;
  /** Pool for worker answers. */
  answerDb: Db;
  /** Completes, batched into one statement per event-loop turn. */
  completions: CompleteBatcher;
  log: Logger;
  metrics: Metrics;
  limits: Limits;
  wallNow(): number;
  scheduling: SchedulingService;
  hub: DeliveryHub;
  /** A run was cancelled; drop it from memory if it is ours. */
  forgetRun(runId: number): void;
  /** A retry run was committed: route it like a newly scheduled run. */
  routeRun(run: NearDueRun): Promise<void>;
  /** A worker stream closed with unanswered deliveries: make them redeliverable now. */
  expireDeliveries(refs: { runId: number; fence: number; deliveries: number }[]): Promise<void>;
  listShards(): Promise<ShardInfo[]>;
  listMembers(): Promise<Member[]>;
  /** Operator moves; null without a cluster (no Redis). */
  ops(): ClusterOperations | null;
}
