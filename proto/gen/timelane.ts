import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Ack as _timelane_v1_Ack, Ack__Output as _timelane_v1_Ack__Output } from './timelane/v1/Ack.js';
import type { AckBatch as _timelane_v1_AckBatch, AckBatch__Output as _timelane_v1_AckBatch__Output } from './timelane/v1/AckBatch.js';
import type { AdminClient as _timelane_v1_AdminClient, AdminDefinition as _timelane_v1_AdminDefinition } from './timelane/v1/Admin.js';
import type { BackfillJobRequest as _timelane_v1_BackfillJobRequest, BackfillJobRequest__Output as _timelane_v1_BackfillJobRequest__Output } from './timelane/v1/BackfillJobRequest.js';
import type { BackfillJobResponse as _timelane_v1_BackfillJobResponse, BackfillJobResponse__Output as _timelane_v1_BackfillJobResponse__Output } from './timelane/v1/BackfillJobResponse.js';
import type { CancelJobRequest as _timelane_v1_CancelJobRequest, CancelJobRequest__Output as _timelane_v1_CancelJobRequest__Output } from './timelane/v1/CancelJobRequest.js';
import type { CancelJobResponse as _timelane_v1_CancelJobResponse, CancelJobResponse__Output as _timelane_v1_CancelJobResponse__Output } from './timelane/v1/CancelJobResponse.js';
import type { CancelRun as _timelane_v1_CancelRun, CancelRun__Output as _timelane_v1_CancelRun__Output } from './timelane/v1/CancelRun.js';
import type { CancelWorkflowRunRequest as _timelane_v1_CancelWorkflowRunRequest, CancelWorkflowRunRequest__Output as _timelane_v1_CancelWorkflowRunRequest__Output } from './timelane/v1/CancelWorkflowRunRequest.js';
import type { CancelWorkflowRunResponse as _timelane_v1_CancelWorkflowRunResponse, CancelWorkflowRunResponse__Output as _timelane_v1_CancelWorkflowRunResponse__Output } from './timelane/v1/CancelWorkflowRunResponse.js';
import type { CatchUp as _timelane_v1_CatchUp, CatchUp__Output as _timelane_v1_CatchUp__Output } from './timelane/v1/CatchUp.js';
import type { Complete as _timelane_v1_Complete, Complete__Output as _timelane_v1_Complete__Output } from './timelane/v1/Complete.js';
import type { CompleteBatch as _timelane_v1_CompleteBatch, CompleteBatch__Output as _timelane_v1_CompleteBatch__Output } from './timelane/v1/CompleteBatch.js';
import type { CronSpec as _timelane_v1_CronSpec, CronSpec__Output as _timelane_v1_CronSpec__Output } from './timelane/v1/CronSpec.js';
import type { DeliveredRun as _timelane_v1_DeliveredRun, DeliveredRun__Output as _timelane_v1_DeliveredRun__Output } from './timelane/v1/DeliveredRun.js';
import type { DeliveryRef as _timelane_v1_DeliveryRef, DeliveryRef__Output as _timelane_v1_DeliveryRef__Output } from './timelane/v1/DeliveryRef.js';
import type { Drain as _timelane_v1_Drain, Drain__Output as _timelane_v1_Drain__Output } from './timelane/v1/Drain.js';
import type { DrainMemberRequest as _timelane_v1_DrainMemberRequest, DrainMemberRequest__Output as _timelane_v1_DrainMemberRequest__Output } from './timelane/v1/DrainMemberRequest.js';
import type { DrainMemberResponse as _timelane_v1_DrainMemberResponse, DrainMemberResponse__Output as _timelane_v1_DrainMemberResponse__Output } from './timelane/v1/DrainMemberResponse.js';
import type { Fail as _timelane_v1_Fail, Fail__Output as _timelane_v1_Fail__Output } from './timelane/v1/Fail.js';
import type { GetJobRequest as _timelane_v1_GetJobRequest, GetJobRequest__Output as _timelane_v1_GetJobRequest__Output } from './timelane/v1/GetJobRequest.js';
import type { GetJobResponse as _timelane_v1_GetJobResponse, GetJobResponse__Output as _timelane_v1_GetJobResponse__Output } from './timelane/v1/GetJobResponse.js';
import type { GetRunRequest as _timelane_v1_GetRunRequest, GetRunRequest__Output as _timelane_v1_GetRunRequest__Output } from './timelane/v1/GetRunRequest.js';
import type { GetRunResponse as _timelane_v1_GetRunResponse, GetRunResponse__Output as _timelane_v1_GetRunResponse__Output } from './timelane/v1/GetRunResponse.js';
import type { GetWorkflowRunRequest as _timelane_v1_GetWorkflowRunRequest, GetWorkflowRunRequest__Output as _timelane_v1_GetWorkflowRunRequest__Output } from './timelane/v1/GetWorkflowRunRequest.js';
import type { GetWorkflowRunResponse as _timelane_v1_GetWorkflowRunResponse, GetWorkflowRunResponse__Output as _timelane_v1_GetWorkflowRunResponse__Output } from './timelane/v1/GetWorkflowRunResponse.js';
import type { Heartbeat as _timelane_v1_Heartbeat, Heartbeat__Output as _timelane_v1_Heartbeat__Output } from './timelane/v1/Heartbeat.js';
import type { IntervalSpec as _timelane_v1_IntervalSpec, IntervalSpec__Output as _timelane_v1_IntervalSpec__Output } from './timelane/v1/IntervalSpec.js';
import type { Job as _timelane_v1_Job, Job__Output as _timelane_v1_Job__Output } from './timelane/v1/Job.js';
import type { JobCounts as _timelane_v1_JobCounts, JobCounts__Output as _timelane_v1_JobCounts__Output } from './timelane/v1/JobCounts.js';
import type { ListDeadRunsRequest as _timelane_v1_ListDeadRunsRequest, ListDeadRunsRequest__Output as _timelane_v1_ListDeadRunsRequest__Output } from './timelane/v1/ListDeadRunsRequest.js';
import type { ListDeadRunsResponse as _timelane_v1_ListDeadRunsResponse, ListDeadRunsResponse__Output as _timelane_v1_ListDeadRunsResponse__Output } from './timelane/v1/ListDeadRunsResponse.js';
import type { ListJobsRequest as _timelane_v1_ListJobsRequest, ListJobsRequest__Output as _timelane_v1_ListJobsRequest__Output } from './timelane/v1/ListJobsRequest.js';
import type { ListJobsResponse as _timelane_v1_ListJobsResponse, ListJobsResponse__Output as _timelane_v1_ListJobsResponse__Output } from './timelane/v1/ListJobsResponse.js';
import type { ListMembersRequest as _timelane_v1_ListMembersRequest, ListMembersRequest__Output as _timelane_v1_ListMembersRequest__Output } from './timelane/v1/ListMembersRequest.js';
import type { ListMembersResponse as _timelane_v1_ListMembersResponse, ListMembersResponse__Output as _timelane_v1_ListMembersResponse__Output } from './timelane/v1/ListMembersResponse.js';
import type { ListQueueLimitsRequest as _timelane_v1_ListQueueLimitsRequest, ListQueueLimitsRequest__Output as _timelane_v1_ListQueueLimitsRequest__Output } from './timelane/v1/ListQueueLimitsRequest.js';
import type { ListQueueLimitsResponse as _timelane_v1_ListQueueLimitsResponse, ListQueueLimitsResponse__Output as _timelane_v1_ListQueueLimitsResponse__Output } from './timelane/v1/ListQueueLimitsResponse.js';
import type { ListQueuesRequest as _timelane_v1_ListQueuesRequest, ListQueuesRequest__Output as _timelane_v1_ListQueuesRequest__Output } from './timelane/v1/ListQueuesRequest.js';
import type { ListQueuesResponse as _timelane_v1_ListQueuesResponse, ListQueuesResponse__Output as _timelane_v1_ListQueuesResponse__Output } from './timelane/v1/ListQueuesResponse.js';
import type { ListRunsRequest as _timelane_v1_ListRunsRequest, ListRunsRequest__Output as _timelane_v1_ListRunsRequest__Output } from './timelane/v1/ListRunsRequest.js';
import type { ListRunsResponse as _timelane_v1_ListRunsResponse, ListRunsResponse__Output as _timelane_v1_ListRunsResponse__Output } from './timelane/v1/ListRunsResponse.js';
import type { ListShardsRequest as _timelane_v1_ListShardsRequest, ListShardsRequest__Output as _timelane_v1_ListShardsRequest__Output } from './timelane/v1/ListShardsRequest.js';
import type { ListShardsResponse as _timelane_v1_ListShardsResponse, ListShardsResponse__Output as _timelane_v1_ListShardsResponse__Output } from './timelane/v1/ListShardsResponse.js';
import type { ListWorkflowRunsRequest as _timelane_v1_ListWorkflowRunsRequest, ListWorkflowRunsRequest__Output as _timelane_v1_ListWorkflowRunsRequest__Output } from './timelane/v1/ListWorkflowRunsRequest.js';
import type { ListWorkflowRunsResponse as _timelane_v1_ListWorkflowRunsResponse, ListWorkflowRunsResponse__Output as _timelane_v1_ListWorkflowRunsResponse__Output } from './timelane/v1/ListWorkflowRunsResponse.js';
import type { Member as _timelane_v1_Member, Member__Output as _timelane_v1_Member__Output } from './timelane/v1/Member.js';
import type { MoveShardRequest as _timelane_v1_MoveShardRequest, MoveShardRequest__Output as _timelane_v1_MoveShardRequest__Output } from './timelane/v1/MoveShardRequest.js';
import type { MoveShardResponse as _timelane_v1_MoveShardResponse, MoveShardResponse__Output as _timelane_v1_MoveShardResponse__Output } from './timelane/v1/MoveShardResponse.js';
import type { PauseJobRequest as _timelane_v1_PauseJobRequest, PauseJobRequest__Output as _timelane_v1_PauseJobRequest__Output } from './timelane/v1/PauseJobRequest.js';
import type { PauseJobResponse as _timelane_v1_PauseJobResponse, PauseJobResponse__Output as _timelane_v1_PauseJobResponse__Output } from './timelane/v1/PauseJobResponse.js';
import type { PutWorkflowRequest as _timelane_v1_PutWorkflowRequest, PutWorkflowRequest__Output as _timelane_v1_PutWorkflowRequest__Output } from './timelane/v1/PutWorkflowRequest.js';
import type { PutWorkflowResponse as _timelane_v1_PutWorkflowResponse, PutWorkflowResponse__Output as _timelane_v1_PutWorkflowResponse__Output } from './timelane/v1/PutWorkflowResponse.js';
import type { QueueLimits as _timelane_v1_QueueLimits, QueueLimits__Output as _timelane_v1_QueueLimits__Output } from './timelane/v1/QueueLimits.js';
import type { RebalanceRequest as _timelane_v1_RebalanceRequest, RebalanceRequest__Output as _timelane_v1_RebalanceRequest__Output } from './timelane/v1/RebalanceRequest.js';
import type { RebalanceResponse as _timelane_v1_RebalanceResponse, RebalanceResponse__Output as _timelane_v1_RebalanceResponse__Output } from './timelane/v1/RebalanceResponse.js';
import type { Recurrence as _timelane_v1_Recurrence, Recurrence__Output as _timelane_v1_Recurrence__Output } from './timelane/v1/Recurrence.js';
import type { ReplayRunsRequest as _timelane_v1_ReplayRunsRequest, ReplayRunsRequest__Output as _timelane_v1_ReplayRunsRequest__Output } from './timelane/v1/ReplayRunsRequest.js';
import type { ReplayRunsResponse as _timelane_v1_ReplayRunsResponse, ReplayRunsResponse__Output as _timelane_v1_ReplayRunsResponse__Output } from './timelane/v1/ReplayRunsResponse.js';
import type { RescheduleJobRequest as _timelane_v1_RescheduleJobRequest, RescheduleJobRequest__Output as _timelane_v1_RescheduleJobRequest__Output } from './timelane/v1/RescheduleJobRequest.js';
import type { RescheduleJobResponse as _timelane_v1_RescheduleJobResponse, RescheduleJobResponse__Output as _timelane_v1_RescheduleJobResponse__Output } from './timelane/v1/RescheduleJobResponse.js';
import type { ResumeJobRequest as _timelane_v1_ResumeJobRequest, ResumeJobRequest__Output as _timelane_v1_ResumeJobRequest__Output } from './timelane/v1/ResumeJobRequest.js';
import type { ResumeJobResponse as _timelane_v1_ResumeJobResponse, ResumeJobResponse__Output as _timelane_v1_ResumeJobResponse__Output } from './timelane/v1/ResumeJobResponse.js';
import type { RetryPolicy as _timelane_v1_RetryPolicy, RetryPolicy__Output as _timelane_v1_RetryPolicy__Output } from './timelane/v1/RetryPolicy.js';
import type { RetryWorkflowRunRequest as _timelane_v1_RetryWorkflowRunRequest, RetryWorkflowRunRequest__Output as _timelane_v1_RetryWorkflowRunRequest__Output } from './timelane/v1/RetryWorkflowRunRequest.js';
import type { RetryWorkflowRunResponse as _timelane_v1_RetryWorkflowRunResponse, RetryWorkflowRunResponse__Output as _timelane_v1_RetryWorkflowRunResponse__Output } from './timelane/v1/RetryWorkflowRunResponse.js';
import type { Run as _timelane_v1_Run, Run__Output as _timelane_v1_Run__Output } from './timelane/v1/Run.js';
import type { RunBatch as _timelane_v1_RunBatch, RunBatch__Output as _timelane_v1_RunBatch__Output } from './timelane/v1/RunBatch.js';
import type { ScheduleBatchRequest as _timelane_v1_ScheduleBatchRequest, ScheduleBatchRequest__Output as _timelane_v1_ScheduleBatchRequest__Output } from './timelane/v1/ScheduleBatchRequest.js';
import type { ScheduleBatchResponse as _timelane_v1_ScheduleBatchResponse, ScheduleBatchResponse__Output as _timelane_v1_ScheduleBatchResponse__Output } from './timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleRequest as _timelane_v1_ScheduleRequest, ScheduleRequest__Output as _timelane_v1_ScheduleRequest__Output } from './timelane/v1/ScheduleRequest.js';
import type { ScheduleResponse as _timelane_v1_ScheduleResponse, ScheduleResponse__Output as _timelane_v1_ScheduleResponse__Output } from './timelane/v1/ScheduleResponse.js';
import type { ScheduledRef as _timelane_v1_ScheduledRef, ScheduledRef__Output as _timelane_v1_ScheduledRef__Output } from './timelane/v1/ScheduledRef.js';
import type { SchedulerClient as _timelane_v1_SchedulerClient, SchedulerDefinition as _timelane_v1_SchedulerDefinition } from './timelane/v1/Scheduler.js';
import type { SetQueueLimitsRequest as _timelane_v1_SetQueueLimitsRequest, SetQueueLimitsRequest__Output as _timelane_v1_SetQueueLimitsRequest__Output } from './timelane/v1/SetQueueLimitsRequest.js';
import type { SetQueueLimitsResponse as _timelane_v1_SetQueueLimitsResponse, SetQueueLimitsResponse__Output as _timelane_v1_SetQueueLimitsResponse__Output } from './timelane/v1/SetQueueLimitsResponse.js';
import type { ShardInfo as _timelane_v1_ShardInfo, ShardInfo__Output as _timelane_v1_ShardInfo__Output } from './timelane/v1/ShardInfo.js';
import type { ShardMove as _timelane_v1_ShardMove, ShardMove__Output as _timelane_v1_ShardMove__Output } from './timelane/v1/ShardMove.js';
import type { StartWorkflowRequest as _timelane_v1_StartWorkflowRequest, StartWorkflowRequest__Output as _timelane_v1_StartWorkflowRequest__Output } from './timelane/v1/StartWorkflowRequest.js';
import type { StartWorkflowResponse as _timelane_v1_StartWorkflowResponse, StartWorkflowResponse__Output as _timelane_v1_StartWorkflowResponse__Output } from './timelane/v1/StartWorkflowResponse.js';
import type { StartWorkflowsRequest as _timelane_v1_StartWorkflowsRequest, StartWorkflowsRequest__Output as _timelane_v1_StartWorkflowsRequest__Output } from './timelane/v1/StartWorkflowsRequest.js';
import type { StartWorkflowsResponse as _timelane_v1_StartWorkflowsResponse, StartWorkflowsResponse__Output as _timelane_v1_StartWorkflowsResponse__Output } from './timelane/v1/StartWorkflowsResponse.js';
import type { Subscribe as _timelane_v1_Subscribe, Subscribe__Output as _timelane_v1_Subscribe__Output } from './timelane/v1/Subscribe.js';
import type { Subscribed as _timelane_v1_Subscribed, Subscribed__Output as _timelane_v1_Subscribed__Output } from './timelane/v1/Subscribed.js';
import type { TriggerJobRequest as _timelane_v1_TriggerJobRequest, TriggerJobRequest__Output as _timelane_v1_TriggerJobRequest__Output } from './timelane/v1/TriggerJobRequest.js';
import type { TriggerJobResponse as _timelane_v1_TriggerJobResponse, TriggerJobResponse__Output as _timelane_v1_TriggerJobResponse__Output } from './timelane/v1/TriggerJobResponse.js';
import type { Unstarted as _timelane_v1_Unstarted, Unstarted__Output as _timelane_v1_Unstarted__Output } from './timelane/v1/Unstarted.js';
import type { UpdateJobRequest as _timelane_v1_UpdateJobRequest, UpdateJobRequest__Output as _timelane_v1_UpdateJobRequest__Output } from './timelane/v1/UpdateJobRequest.js';
import type { UpdateJobResponse as _timelane_v1_UpdateJobResponse, UpdateJobResponse__Output as _timelane_v1_UpdateJobResponse__Output } from './timelane/v1/UpdateJobResponse.js';
import type { WorkRequest as _timelane_v1_WorkRequest, WorkRequest__Output as _timelane_v1_WorkRequest__Output } from './timelane/v1/WorkRequest.js';
import type { WorkResponse as _timelane_v1_WorkResponse, WorkResponse__Output as _timelane_v1_WorkResponse__Output } from './timelane/v1/WorkResponse.js';
import type { WorkerClient as _timelane_v1_WorkerClient, WorkerDefinition as _timelane_v1_WorkerDefinition } from './timelane/v1/Worker.js';
import type { WorkflowDefinition as _timelane_v1_WorkflowDefinition, WorkflowDefinition__Output as _timelane_v1_WorkflowDefinition__Output } from './timelane/v1/WorkflowDefinition.js';
import type { WorkflowRef as _timelane_v1_WorkflowRef, WorkflowRef__Output as _timelane_v1_WorkflowRef__Output } from './timelane/v1/WorkflowRef.js';
import type { WorkflowRun as _timelane_v1_WorkflowRun, WorkflowRun__Output as _timelane_v1_WorkflowRun__Output } from './timelane/v1/WorkflowRun.js';
import type { WorkflowStep as _timelane_v1_WorkflowStep, WorkflowStep__Output as _timelane_v1_WorkflowStep__Output } from './timelane/v1/WorkflowStep.js';
import type { WorkflowStepDelivery as _timelane_v1_WorkflowStepDelivery, WorkflowStepDelivery__Output as _timelane_v1_WorkflowStepDelivery__Output } from './timelane/v1/WorkflowStepDelivery.js';
import type { WorkflowStepStatus as _timelane_v1_WorkflowStepStatus, WorkflowStepStatus__Output as _timelane_v1_WorkflowStepStatus__Output } from './timelane/v1/WorkflowStepStatus.js';
import type { WorkflowsClient as _timelane_v1_WorkflowsClient, WorkflowsDefinition as _timelane_v1_WorkflowsDefinition } from './timelane/v1/Workflows.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  timelane: {
    v1: {
      Ack: MessageTypeDefinition<_timelane_v1_Ack, _timelane_v1_Ack__Output>
      AckBatch: MessageTypeDefinition<_timelane_v1_AckBatch, _timelane_v1_AckBatch__Output>
      Admin: SubtypeConstructor<typeof grpc.Client, _timelane_v1_AdminClient> & { service: _timelane_v1_AdminDefinition }
      BackfillJobRequest: MessageTypeDefinition<_timelane_v1_BackfillJobRequest, _timelane_v1_BackfillJobRequest__Output>
      BackfillJobResponse: MessageTypeDefinition<_timelane_v1_BackfillJobResponse, _timelane_v1_BackfillJobResponse__Output>
      CancelJobRequest: MessageTypeDefinition<_timelane_v1_CancelJobRequest, _timelane_v1_CancelJobRequest__Output>
      CancelJobResponse: MessageTypeDefinition<_timelane_v1_CancelJobResponse, _timelane_v1_CancelJobResponse__Output>
      CancelRun: MessageTypeDefinition<_timelane_v1_CancelRun, _timelane_v1_CancelRun__Output>
      CancelWorkflowRunRequest: MessageTypeDefinition<_timelane_v1_CancelWorkflowRunRequest, _timelane_v1_CancelWorkflowRunRequest__Output>
      CancelWorkflowRunResponse: MessageTypeDefinition<_timelane_v1_CancelWorkflowRunResponse, _timelane_v1_CancelWorkflowRunResponse__Output>
      CatchUp: MessageTypeDefinition<_timelane_v1_CatchUp, _timelane_v1_CatchUp__Output>
      CatchUpMode: EnumTypeDefinition
      Complete: MessageTypeDefinition<_timelane_v1_Complete, _timelane_v1_Complete__Output>
      CompleteBatch: MessageTypeDefinition<_timelane_v1_CompleteBatch, _timelane_v1_CompleteBatch__Output>
      CronSpec: MessageTypeDefinition<_timelane_v1_CronSpec, _timelane_v1_CronSpec__Output>
      DeliveredRun: MessageTypeDefinition<_timelane_v1_DeliveredRun, _timelane_v1_DeliveredRun__Output>
      DeliveryMode: EnumTypeDefinition
      DeliveryRef: MessageTypeDefinition<_timelane_v1_DeliveryRef, _timelane_v1_DeliveryRef__Output>
      Drain: MessageTypeDefinition<_timelane_v1_Drain, _timelane_v1_Drain__Output>
      DrainMemberRequest: MessageTypeDefinition<_timelane_v1_DrainMemberRequest, _timelane_v1_DrainMemberRequest__Output>
      DrainMemberResponse: MessageTypeDefinition<_timelane_v1_DrainMemberResponse, _timelane_v1_DrainMemberResponse__Output>
      DstGapPolicy: EnumTypeDefinition
      DstRepeatPolicy: EnumTypeDefinition
      Fail: MessageTypeDefinition<_timelane_v1_Fail, _timelane_v1_Fail__Output>
      GetJobRequest: MessageTypeDefinition<_timelane_v1_GetJobRequest, _timelane_v1_GetJobRequest__Output>
      GetJobResponse: MessageTypeDefinition<_timelane_v1_GetJobResponse, _timelane_v1_GetJobResponse__Output>
      GetRunRequest: MessageTypeDefinition<_timelane_v1_GetRunRequest, _timelane_v1_GetRunRequest__Output>
      GetRunResponse: MessageTypeDefinition<_timelane_v1_GetRunResponse, _timelane_v1_GetRunResponse__Output>
      GetWorkflowRunRequest: MessageTypeDefinition<_timelane_v1_GetWorkflowRunRequest, _timelane_v1_GetWorkflowRunRequest__Output>
      GetWorkflowRunResponse: MessageTypeDefinition<_timelane_v1_GetWorkflowRunResponse, _timelane_v1_GetWorkflowRunResponse__Output>
      Heartbeat: MessageTypeDefinition<_timelane_v1_Heartbeat, _timelane_v1_Heartbeat__Output>
      IntervalSpec: MessageTypeDefinition<_timelane_v1_IntervalSpec, _timelane_v1_IntervalSpec__Output>
      Job: MessageTypeDefinition<_timelane_v1_Job, _timelane_v1_Job__Output>
      JobCounts: MessageTypeDefinition<_timelane_v1_JobCounts, _timelane_v1_JobCounts__Output>
      JobKind: EnumTypeDefinition
      JobStatus: EnumTypeDefinition
      ListDeadRunsRequest: MessageTypeDefinition<_timelane_v1_ListDeadRunsRequest, _timelane_v1_ListDeadRunsRequest__Output>
      ListDeadRunsResponse: MessageTypeDefinition<_timelane_v1_ListDeadRunsResponse, _timelane_v1_ListDeadRunsResponse__Output>
      ListJobsRequest: MessageTypeDefinition<_timelane_v1_ListJobsRequest, _timelane_v1_ListJobsRequest__Output>
      ListJobsResponse: MessageTypeDefinition<_timelane_v1_ListJobsResponse, _timelane_v1_ListJobsResponse__Output>
      ListMembersRequest: MessageTypeDefinition<_timelane_v1_ListMembersRequest, _timelane_v1_ListMembersRequest__Output>
      ListMembersResponse: MessageTypeDefinition<_timelane_v1_ListMembersResponse, _timelane_v1_ListMembersResponse__Output>
      ListQueueLimitsRequest: MessageTypeDefinition<_timelane_v1_ListQueueLimitsRequest, _timelane_v1_ListQueueLimitsRequest__Output>
      ListQueueLimitsResponse: MessageTypeDefinition<_timelane_v1_ListQueueLimitsResponse, _timelane_v1_ListQueueLimitsResponse__Output>
      ListQueuesRequest: MessageTypeDefinition<_timelane_v1_ListQueuesRequest, _timelane_v1_ListQueuesRequest__Output>
      ListQueuesResponse: MessageTypeDefinition<_timelane_v1_ListQueuesResponse, _timelane_v1_ListQueuesResponse__Output>
      ListRunsRequest: MessageTypeDefinition<_timelane_v1_ListRunsRequest, _timelane_v1_ListRunsRequest__Output>
      ListRunsResponse: MessageTypeDefinition<_timelane_v1_ListRunsResponse, _timelane_v1_ListRunsResponse__Output>
      ListShardsRequest: MessageTypeDefinition<_timelane_v1_ListShardsRequest, _timelane_v1_ListShardsRequest__Output>
      ListShardsResponse: MessageTypeDefinition<_timelane_v1_ListShardsResponse, _timelane_v1_ListShardsResponse__Output>
      ListWorkflowRunsRequest: MessageTypeDefinition<_timelane_v1_ListWorkflowRunsRequest, _timelane_v1_ListWorkflowRunsRequest__Output>
      ListWorkflowRunsResponse: MessageTypeDefinition<_timelane_v1_ListWorkflowRunsResponse, _timelane_v1_ListWorkflowRunsResponse__Output>
      Member: MessageTypeDefinition<_timelane_v1_Member, _timelane_v1_Member__Output>
      MoveShardRequest: MessageTypeDefinition<_timelane_v1_MoveShardRequest, _timelane_v1_MoveShardRequest__Output>
      MoveShardResponse: MessageTypeDefinition<_timelane_v1_MoveShardResponse, _timelane_v1_MoveShardResponse__Output>
      OverlapPolicy: EnumTypeDefinition
      PauseJobRequest: MessageTypeDefinition<_timelane_v1_PauseJobRequest, _timelane_v1_PauseJobRequest__Output>
      PauseJobResponse: MessageTypeDefinition<_timelane_v1_PauseJobResponse, _timelane_v1_PauseJobResponse__Output>
      PutWorkflowRequest: MessageTypeDefinition<_timelane_v1_PutWorkflowRequest, _timelane_v1_PutWorkflowRequest__Output>
      PutWorkflowResponse: MessageTypeDefinition<_timelane_v1_PutWorkflowResponse, _timelane_v1_PutWorkflowResponse__Output>
      QueueLimits: MessageTypeDefinition<_timelane_v1_QueueLimits, _timelane_v1_QueueLimits__Output>
      RebalanceRequest: MessageTypeDefinition<_timelane_v1_RebalanceRequest, _timelane_v1_RebalanceRequest__Output>
      RebalanceResponse: MessageTypeDefinition<_timelane_v1_RebalanceResponse, _timelane_v1_RebalanceResponse__Output>
      Recurrence: MessageTypeDefinition<_timelane_v1_Recurrence, _timelane_v1_Recurrence__Output>
      ReplayRunsRequest: MessageTypeDefinition<_timelane_v1_ReplayRunsRequest, _timelane_v1_ReplayRunsRequest__Output>
      ReplayRunsResponse: MessageTypeDefinition<_timelane_v1_ReplayRunsResponse, _timelane_v1_ReplayRunsResponse__Output>
      RescheduleJobRequest: MessageTypeDefinition<_timelane_v1_RescheduleJobRequest, _timelane_v1_RescheduleJobRequest__Output>
      RescheduleJobResponse: MessageTypeDefinition<_timelane_v1_RescheduleJobResponse, _timelane_v1_RescheduleJobResponse__Output>
      ResumeJobRequest: MessageTypeDefinition<_timelane_v1_ResumeJobRequest, _timelane_v1_ResumeJobRequest__Output>
      ResumeJobResponse: MessageTypeDefinition<_timelane_v1_ResumeJobResponse, _timelane_v1_ResumeJobResponse__Output>
      RetryPolicy: MessageTypeDefinition<_timelane_v1_RetryPolicy, _timelane_v1_RetryPolicy__Output>
      RetryWorkflowRunRequest: MessageTypeDefinition<_timelane_v1_RetryWorkflowRunRequest, _timelane_v1_RetryWorkflowRunRequest__Output>
      RetryWorkflowRunResponse: MessageTypeDefinition<_timelane_v1_RetryWorkflowRunResponse, _timelane_v1_RetryWorkflowRunResponse__Output>
      Run: MessageTypeDefinition<_timelane_v1_Run, _timelane_v1_Run__Output>
      RunBatch: MessageTypeDefinition<_timelane_v1_RunBatch, _timelane_v1_RunBatch__Output>
      RunStatus: EnumTypeDefinition
      ScheduleBatchRequest: MessageTypeDefinition<_timelane_v1_ScheduleBatchRequest, _timelane_v1_ScheduleBatchRequest__Output>
      ScheduleBatchResponse: MessageTypeDefinition<_timelane_v1_ScheduleBatchResponse, _timelane_v1_ScheduleBatchResponse__Output>
      ScheduleRequest: MessageTypeDefinition<_timelane_v1_ScheduleRequest, _timelane_v1_ScheduleRequest__Output>
      ScheduleResponse: MessageTypeDefinition<_timelane_v1_ScheduleResponse, _timelane_v1_ScheduleResponse__Output>
      ScheduledRef: MessageTypeDefinition<_timelane_v1_ScheduledRef, _timelane_v1_ScheduledRef__Output>
      Scheduler: SubtypeConstructor<typeof grpc.Client, _timelane_v1_SchedulerClient> & { service: _timelane_v1_SchedulerDefinition }
      SetQueueLimitsRequest: MessageTypeDefinition<_timelane_v1_SetQueueLimitsRequest, _timelane_v1_SetQueueLimitsRequest__Output>
      SetQueueLimitsResponse: MessageTypeDefinition<_timelane_v1_SetQueueLimitsResponse, _timelane_v1_SetQueueLimitsResponse__Output>
      ShardInfo: MessageTypeDefinition<_timelane_v1_ShardInfo, _timelane_v1_ShardInfo__Output>
      ShardMove: MessageTypeDefinition<_timelane_v1_ShardMove, _timelane_v1_ShardMove__Output>
      StartWorkflowRequest: MessageTypeDefinition<_timelane_v1_StartWorkflowRequest, _timelane_v1_StartWorkflowRequest__Output>
      StartWorkflowResponse: MessageTypeDefinition<_timelane_v1_StartWorkflowResponse, _timelane_v1_StartWorkflowResponse__Output>
      StartWorkflowsRequest: MessageTypeDefinition<_timelane_v1_StartWorkflowsRequest, _timelane_v1_StartWorkflowsRequest__Output>
      StartWorkflowsResponse: MessageTypeDefinition<_timelane_v1_StartWorkflowsResponse, _timelane_v1_StartWorkflowsResponse__Output>
      StepState: EnumTypeDefinition
      StepTrigger: EnumTypeDefinition
      Subscribe: MessageTypeDefinition<_timelane_v1_Subscribe, _timelane_v1_Subscribe__Output>
      Subscribed: MessageTypeDefinition<_timelane_v1_Subscribed, _timelane_v1_Subscribed__Output>
      TriggerJobRequest: MessageTypeDefinition<_timelane_v1_TriggerJobRequest, _timelane_v1_TriggerJobRequest__Output>
      TriggerJobResponse: MessageTypeDefinition<_timelane_v1_TriggerJobResponse, _timelane_v1_TriggerJobResponse__Output>
      Unstarted: MessageTypeDefinition<_timelane_v1_Unstarted, _timelane_v1_Unstarted__Output>
      UpdateJobRequest: MessageTypeDefinition<_timelane_v1_UpdateJobRequest, _timelane_v1_UpdateJobRequest__Output>
      UpdateJobResponse: MessageTypeDefinition<_timelane_v1_UpdateJobResponse, _timelane_v1_UpdateJobResponse__Output>
      WorkRequest: MessageTypeDefinition<_timelane_v1_WorkRequest, _timelane_v1_WorkRequest__Output>
      WorkResponse: MessageTypeDefinition<_timelane_v1_WorkResponse, _timelane_v1_WorkResponse__Output>
      Worker: SubtypeConstructor<typeof grpc.Client, _timelane_v1_WorkerClient> & { service: _timelane_v1_WorkerDefinition }
      WorkflowDefinition: MessageTypeDefinition<_timelane_v1_WorkflowDefinition, _timelane_v1_WorkflowDefinition__Output>
      WorkflowRef: MessageTypeDefinition<_timelane_v1_WorkflowRef, _timelane_v1_WorkflowRef__Output>
      WorkflowRun: MessageTypeDefinition<_timelane_v1_WorkflowRun, _timelane_v1_WorkflowRun__Output>
      WorkflowRunState: EnumTypeDefinition
      WorkflowStep: MessageTypeDefinition<_timelane_v1_WorkflowStep, _timelane_v1_WorkflowStep__Output>
      WorkflowStepDelivery: MessageTypeDefinition<_timelane_v1_WorkflowStepDelivery, _timelane_v1_WorkflowStepDelivery__Output>
      WorkflowStepStatus: MessageTypeDefinition<_timelane_v1_WorkflowStepStatus, _timelane_v1_WorkflowStepStatus__Output>
      Workflows: SubtypeConstructor<typeof grpc.Client, _timelane_v1_WorkflowsClient> & { service: _timelane_v1_WorkflowsDefinition }
    }
  }
}

