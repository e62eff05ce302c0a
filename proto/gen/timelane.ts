import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Ack as _timelane_v1_Ack, Ack__Output as _timelane_v1_Ack__Output } from './timelane/v1/Ack.js';
import type { AckBatch as _timelane_v1_AckBatch, AckBatch__Output as _timelane_v1_AckBatch__Output } from './timelane/v1/AckBatch.js';
import type { AdminClient as _timelane_v1_AdminClient, AdminDefinition as _timelane_v1_AdminDefinition } from './timelane/v1/Admin.js';
import type { CancelJobRequest as _timelane_v1_CancelJobRequest, CancelJobRequest__Output as _timelane_v1_CancelJobRequest__Output } from './timelane/v1/CancelJobRequest.js';
import type { CancelJobResponse as _timelane_v1_CancelJobResponse, CancelJobResponse__Output as _timelane_v1_CancelJobResponse__Output } from './timelane/v1/CancelJobResponse.js';
import type { Complete as _timelane_v1_Complete, Complete__Output as _timelane_v1_Complete__Output } from './timelane/v1/Complete.js';
import type { CompleteBatch as _timelane_v1_CompleteBatch, CompleteBatch__Output as _timelane_v1_CompleteBatch__Output } from './timelane/v1/CompleteBatch.js';
import type { DeliveredRun as _timelane_v1_DeliveredRun, DeliveredRun__Output as _timelane_v1_DeliveredRun__Output } from './timelane/v1/DeliveredRun.js';
import type { DeliveryRef as _timelane_v1_DeliveryRef, DeliveryRef__Output as _timelane_v1_DeliveryRef__Output } from './timelane/v1/DeliveryRef.js';
import type { DrainMemberRequest as _timelane_v1_DrainMemberRequest, DrainMemberRequest__Output as _timelane_v1_DrainMemberRequest__Output } from './timelane/v1/DrainMemberRequest.js';
import type { DrainMemberResponse as _timelane_v1_DrainMemberResponse, DrainMemberResponse__Output as _timelane_v1_DrainMemberResponse__Output } from './timelane/v1/DrainMemberResponse.js';
import type { Fail as _timelane_v1_Fail, Fail__Output as _timelane_v1_Fail__Output } from './timelane/v1/Fail.js';
import type { GetJobRequest as _timelane_v1_GetJobRequest, GetJobRequest__Output as _timelane_v1_GetJobRequest__Output } from './timelane/v1/GetJobRequest.js';
import type { GetJobResponse as _timelane_v1_GetJobResponse, GetJobResponse__Output as _timelane_v1_GetJobResponse__Output } from './timelane/v1/GetJobResponse.js';
import type { GetRunRequest as _timelane_v1_GetRunRequest, GetRunRequest__Output as _timelane_v1_GetRunRequest__Output } from './timelane/v1/GetRunRequest.js';
import type { GetRunResponse as _timelane_v1_GetRunResponse, GetRunResponse__Output as _timelane_v1_GetRunResponse__Output } from './timelane/v1/GetRunResponse.js';
import type { Heartbeat as _timelane_v1_Heartbeat, Heartbeat__Output as _timelane_v1_Heartbeat__Output } from './timelane/v1/Heartbeat.js';
import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from './timelane/v1/Job.js';
import type { ListMembersRequest as _timelane_v1_ListMembersRequest, ListMembersRequest__Output as _timelane_v1_ListMembersRequest__Output } from './timelane/v1/ListMembersRequest.js';
import type { ListMembersResponse as _timelane_v1_ListMembersResponse, ListMembersResponse__Output as _timelane_v1_ListMembersResponse__Output } from './timelane/v1/ListMembersResponse.js';
import type { ListRunsRequest as _timelane_v1_ListRunsRequest, ListRunsRequest__Output as _timelane_v1_ListRunsRequest__Output } from './timelane/v1/ListRunsRequest.js';
import type { ListRunsResponse as _timelane_v1_ListRunsResponse, ListRunsResponse__Output as _timelane_v1_ListRunsResponse__Output } from './timelane/v1/ListRunsResponse.js';
import type { ListShardsRequest as _timelane_v1_ListShardsRequest, ListShardsRequest__Output as _timelane_v1_ListShardsRequest__Output } from './timelane/v1/ListShardsRequest.js';
import type { ListShardsResponse as _timelane_v1_ListShardsResponse, ListShardsResponse__Output as _timelane_v1_ListShardsResponse__Output } from './timelane/v1/ListShardsResponse.js';
import type { Member as _timelane_v1_Member, Member__Output as _timelane_v1_Member__Output } from './timelane/v1/Member.js';
import type { MoveShardRequest as _timelane_v1_MoveShardRequest, MoveShardRequest__Output as _timelane_v1_MoveShardRequest__Output } from './timelane/v1/MoveShardRequest.js';
import type { MoveShardResponse as _timelane_v1_MoveShardResponse, MoveShardResponse__Output as _timelane_v1_MoveShardResponse__Output } from './timelane/v1/MoveShardResponse.js';
import type { RebalanceRequest as _timelane_v1_RebalanceRequest, RebalanceRequest__Output as _timelane_v1_RebalanceRequest__Output } from './timelane/v1/RebalanceRequest.js';
import type { RebalanceResponse as _timelane_v1_RebalanceResponse, RebalanceResponse__Output as _timelane_v1_RebalanceResponse__Output } from './timelane/v1/RebalanceResponse.js';
import type { RescheduleJobRequest as _timelane_v1_RescheduleJobRequest, RescheduleJobRequest__Output as _timelane_v1_RescheduleJobRequest__Output } from './timelane/v1/RescheduleJobRequest.js';
import type { RescheduleJobResponse as _timelane_v1_RescheduleJobResponse, RescheduleJobResponse__Output as _timelane_v1_RescheduleJobResponse__Output } from './timelane/v1/RescheduleJobResponse.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from './timelane/v1/RetryPolicy.js';
import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from './timelane/v1/Run.js';
import type { RunBatch as _timelane_v1_RunBatch, RunBatch__Output as _timelane_v1_RunBatch__Output } from './timelane/v1/RunBatch.js';
import type { ScheduleBatchRequest as _timelane_v1_ScheduleBatchRequest, ScheduleBatchRequest__Output as _timelane_v1_ScheduleBatchRequest__Output } from './timelane/v1/ScheduleBatchRequest.js';
import type { ScheduleBatchResponse as _timelane_v1_ScheduleBatchResponse, ScheduleBatchResponse__Output as _timelane_v1_ScheduleBatchResponse__Output } from './timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleRequest as _timelane_v1_ScheduleRequest, ScheduleRequest__Output as _timelane_v1_ScheduleRequest__Output } from './timelane/v1/ScheduleRequest.js';
import type { ScheduleResponse as _timelane_v1_ScheduleResponse, ScheduleResponse__Output as _timelane_v1_ScheduleResponse__Output } from './timelane/v1/ScheduleResponse.js';
import type { ScheduledRef as _timelane_v1_ScheduledRef, ScheduledRef__Output as _timelane_v1_ScheduledRef__Output } from './timelane/v1/ScheduledRef.js';
import type { SchedulerClient as _timelane_v1_SchedulerClient, SchedulerDefinition as _timelane_v1_SchedulerDefinition } from './timelane/v1/Scheduler.js';
import type { ShardInfo as _timelane_v1_ShardInfo, ShardInfo__Output as _timelane_v1_ShardInfo__Output } from './timelane/v1/ShardInfo.js';
import type { ShardMove as _timelane_v1_ShardMove, ShardMove__Output as _timelane_v1_ShardMove__Output } from './timelane/v1/ShardMove.js';
import type { Subscribe as _timelane_v1_Subscribe, Subscribe__Output as _timelane_v1_Subscribe__Output } from './timelane/v1/Subscribe.js';
import type { Subscribed as _timelane_v1_Subscribed, Subscribed__Output as _timelane_v1_Subscribed__Output } from './timelane/v1/Subscribed.js';
import type { WorkRequest as _timelane_v1_WorkRequest, WorkRequest__Output as _timelane_v1_WorkRequest__Output } from './timelane/v1/WorkRequest.js';
import type { WorkResponse as _timelane_v1_WorkResponse, WorkResponse__Output as _timelane_v1_WorkResponse__Output } from './timelane/v1/WorkResponse.js';
import type { WorkerClient as _timelane_v1_WorkerClient, WorkerDefinition as _timelane_v1_WorkerDefinition } from './timelane/v1/Worker.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  timelane: {
    v1: {
      Ack: MessageTypeDefinition<_timelane_v1_Ack, _timelane_v1_Ack__Output>
      AckBatch: MessageTypeDefinition<_timelane_v1_AckBatch, _timelane_v1_AckBatch__Output>
      Admin: SubtypeConstructor<typeof grpc.Client, _timelane_v1_AdminClient> & { service: _timelane_v1_AdminDefinition }
      CancelJobRequest: MessageTypeDefinition<_timelane_v1_CancelJobRequest, _timelane_v1_CancelJobRequest__Output>
      CancelJobResponse: MessageTypeDefinition<_timelane_v1_CancelJobResponse, _timelane_v1_CancelJobResponse__Output>
      Complete: MessageTypeDefinition<_timelane_v1_Complete, _timelane_v1_Complete__Output>
      CompleteBatch: MessageTypeDefinition<_timelane_v1_CompleteBatch, _timelane_v1_CompleteBatch__Output>
      DeliveredRun: MessageTypeDefinition<_timelane_v1_DeliveredRun, _timelane_v1_DeliveredRun__Output>
      DeliveryMode: EnumTypeDefinition
      DeliveryRef: MessageTypeDefinition<_timelane_v1_DeliveryRef, _timelane_v1_DeliveryRef__Output>
      DrainMemberRequest: MessageTypeDefinition<_timelane_v1_DrainMemberRequest, _timelane_v1_DrainMemberRequest__Output>
      DrainMemberResponse: MessageTypeDefinition<_timelane_v1_DrainMemberResponse, _timelane_v1_DrainMemberResponse__Output>
      Fail: MessageTypeDefinition<_timelane_v1_Fail, _timelane_v1_Fail__Output>
      GetJobRequest: MessageTypeDefinition<_timelane_v1_GetJobRequest, _timelane_v1_GetJobRequest__Output>
      GetJobResponse: MessageTypeDefinition<_timelane_v1_GetJobResponse, _timelane_v1_GetJobResponse__Output>
      GetRunRequest: MessageTypeDefinition<_timelane_v1_GetRunRequest, _timelane_v1_GetRunRequest__Output>
      GetRunResponse: MessageTypeDefinition<_timelane_v1_GetRunResponse, _timelane_v1_GetRunResponse__Output>
      Heartbeat: MessageTypeDefinition<_timelane_v1_Heartbeat, _timelane_v1_Heartbeat__Output>
      Job: MessageTypeDefinition<_timelane_v1_Job, _timelane_v1_Job__Output>
      JobStatus: EnumTypeDefinition
      ListMembersRequest: MessageTypeDefinition<_timelane_v1_ListMembersRequest, _timelane_v1_ListMembersRequest__Output>
      ListMembersResponse: MessageTypeDefinition<_timelane_v1_ListMembersResponse, _timelane_v1_ListMembersResponse__Output>
      ListRunsRequest: MessageTypeDefinition<_timelane_v1_ListRunsRequest, _timelane_v1_ListRunsRequest__Output>
      ListRunsResponse: MessageTypeDefinition<_timelane_v1_ListRunsResponse, _timelane_v1_ListRunsResponse__Output>
      ListShardsRequest: MessageTypeDefinition<_timelane_v1_ListShardsRequest, _timelane_v1_ListShardsRequest__Output>
      ListShardsResponse: MessageTypeDefinition<_timelane_v1_ListShardsResponse, _timelane_v1_ListShardsResponse__Output>
      Member: MessageTypeDefinition<_timelane_v1_Member, _timelane_v1_Member__Output>
      MoveShardRequest: MessageTypeDefinition<_timelane_v1_MoveShardRequest, _timelane_v1_MoveShardRequest__Output>
      MoveShardResponse: MessageTypeDefinition<_timelane_v1_MoveShardResponse, _timelane_v1_MoveShardResponse__Output>
      RebalanceRequest: MessageTypeDefinition<_timelane_v1_RebalanceRequest, _timelane_v1_RebalanceRequest__Output>
      RebalanceResponse: MessageTypeDefinition<_timelane_v1_RebalanceResponse, _timelane_v1_RebalanceResponse__Output>
      RescheduleJobRequest: MessageTypeDefinition<_timelane_v1_RescheduleJobRequest, _timelane_v1_RescheduleJobRequest__Output>
      RescheduleJobResponse: MessageTypeDefinition<_timelane_v1_RescheduleJobResponse, _timelane_v1_RescheduleJobResponse__Output>
      RetryPolicy: MessageTypeDefinition<_timelane_v1_RetryPolicy, _timelane_v1_RetryPolicy__Output>
      Run: MessageTypeDefinition<_timelane_v1_Run, _timelane_v1_Run__Output>
      RunBatch: MessageTypeDefinition<_timelane_v1_RunBatch, _timelane_v1_RunBatch__Output>
      RunStatus: EnumTypeDefinition
      ScheduleBatchRequest: MessageTypeDefinition<_timelane_v1_ScheduleBatchRequest, _timelane_v1_ScheduleBatchRequest__Output>
      ScheduleBatchResponse: MessageTypeDefinition<_timelane_v1_ScheduleBatchResponse, _timelane_v1_ScheduleBatchResponse__Output>
      ScheduleRequest: MessageTypeDefinition<_timelane_v1_ScheduleRequest, _timelane_v1_ScheduleRequest__Output>
      ScheduleResponse: MessageTypeDefinition<_timelane_v1_ScheduleResponse, _timelane_v1_ScheduleResponse__Output>
      ScheduledRef: MessageTypeDefinition<_timelane_v1_ScheduledRef, _timelane_v1_ScheduledRef__Output>
      Scheduler: SubtypeConstructor<typeof grpc.Client, _timelane_v1_SchedulerClient> & { service: _timelane_v1_SchedulerDefinition }
      ShardInfo: MessageTypeDefinition<_timelane_v1_ShardInfo, _timelane_v1_ShardInfo__Output>
      ShardMove: MessageTypeDefinition<_timelane_v1_ShardMove, _timelane_v1_ShardMove__Output>
      Subscribe: MessageTypeDefinition<_timelane_v1_Subscribe, _timelane_v1_Subscribe__Output>
      Subscribed: MessageTypeDefinition<_timelane_v1_Subscribed, _timelane_v1_Subscribed__Output>
      WorkRequest: MessageTypeDefinition<_timelane_v1_WorkRequest, _timelane_v1_WorkRequest__Output>
      WorkResponse: MessageTypeDefinition<_timelane_v1_WorkResponse, _timelane_v1_WorkResponse__Output>
      Worker: SubtypeConstructor<typeof grpc.Client, _timelane_v1_WorkerClient> & { service: _timelane_v1_WorkerDefinition }
    }
  }
}

