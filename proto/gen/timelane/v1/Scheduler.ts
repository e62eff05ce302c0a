// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BackfillJobRequest as _timelane_v1_BackfillJobRequest, BackfillJobRequest__Output as _timelane_v1_BackfillJobRequest__Output } from '../../timelane/v1/BackfillJobRequest.js';
import type { BackfillJobResponse as _timelane_v1_BackfillJobResponse, BackfillJobResponse__Output as _timelane_v1_BackfillJobResponse__Output } from '../../timelane/v1/BackfillJobResponse.js';
import type { CancelJobRequest as _timelane_v1_CancelJobRequest, CancelJobRequest__Output as _timelane_v1_CancelJobRequest__Output } from '../../timelane/v1/CancelJobRequest.js';
import type { CancelJobResponse as _timelane_v1_CancelJobResponse, CancelJobResponse__Output as _timelane_v1_CancelJobResponse__Output } from '../../timelane/v1/CancelJobResponse.js';
import type { GetJobRequest as _timelane_v1_GetJobRequest, GetJobRequest__Output as _timelane_v1_GetJobRequest__Output } from '../../timelane/v1/GetJobRequest.js';
import type { GetJobResponse as _timelane_v1_GetJobResponse, GetJobResponse__Output as _timelane_v1_GetJobResponse__Output } from '../../timelane/v1/GetJobResponse.js';
import type { GetRunRequest as _timelane_v1_GetRunRequest, GetRunRequest__Output as _timelane_v1_GetRunRequest__Output } from '../../timelane/v1/GetRunRequest.js';
import type { GetRunResponse as _timelane_v1_GetRunResponse, GetRunResponse__Output as _timelane_v1_GetRunResponse__Output } from '../../timelane/v1/GetRunResponse.js';
import type { ListDeadRunsRequest as _timelane_v1_ListDeadRunsRequest, ListDeadRunsRequest__Output as _timelane_v1_ListDeadRunsRequest__Output } from '../../timelane/v1/ListDeadRunsRequest.js';
import type { ListDeadRunsResponse as _timelane_v1_ListDeadRunsResponse, ListDeadRunsResponse__Output as _timelane_v1_ListDeadRunsResponse__Output } from '../../timelane/v1/ListDeadRunsResponse.js';
import type { ListJobsRequest as _timelane_v1_ListJobsRequest, ListJobsRequest__Output as _timelane_v1_ListJobsRequest__Output } from '../../timelane/v1/ListJobsRequest.js';
import type { ListJobsResponse as _timelane_v1_ListJobsResponse, ListJobsResponse__Output as _timelane_v1_ListJobsResponse__Output } from '../../timelane/v1/ListJobsResponse.js';
import type { ListQueuesRequest as _timelane_v1_ListQueuesRequest, ListQueuesRequest__Output as _timelane_v1_ListQueuesRequest__Output } from '../../timelane/v1/ListQueuesRequest.js';
import type { ListQueuesResponse as _timelane_v1_ListQueuesResponse, ListQueuesResponse__Output as _timelane_v1_ListQueuesResponse__Output } from '../../timelane/v1/ListQueuesResponse.js';
import type { ListRunsRequest as _timelane_v1_ListRunsRequest, ListRunsRequest__Output as _timelane_v1_ListRunsRequest__Output } from '../../timelane/v1/ListRunsRequest.js';
import type { ListRunsResponse as _timelane_v1_ListRunsResponse, ListRunsResponse__Output as _timelane_v1_ListRunsResponse__Output } from '../../timelane/v1/ListRunsResponse.js';
import type { PauseJobRequest as _timelane_v1_PauseJobRequest, PauseJobRequest__Output as _timelane_v1_PauseJobRequest__Output } from '../../timelane/v1/PauseJobRequest.js';
import type { PauseJobResponse as _timelane_v1_PauseJobResponse, PauseJobResponse__Output as _timelane_v1_PauseJobResponse__Output } from '../../timelane/v1/PauseJobResponse.js';
import type { ReplayRunsRequest as _timelane_v1_ReplayRunsRequest, ReplayRunsRequest__Output as _timelane_v1_ReplayRunsRequest__Output } from '../../timelane/v1/ReplayRunsRequest.js';
import type { ReplayRunsResponse as _timelane_v1_ReplayRunsResponse, ReplayRunsResponse__Output as _timelane_v1_ReplayRunsResponse__Output } from '../../timelane/v1/ReplayRunsResponse.js';
import type { RescheduleJobRequest as _timelane_v1_RescheduleJobRequest, RescheduleJobRequest__Output as _timelane_v1_RescheduleJobRequest__Output } from '../../timelane/v1/RescheduleJobRequest.js';
import type { RescheduleJobResponse as _timelane_v1_RescheduleJobResponse, RescheduleJobResponse__Output as _timelane_v1_RescheduleJobResponse__Output } from '../../timelane/v1/RescheduleJobResponse.js';
import type { ResumeJobRequest as _timelane_v1_ResumeJobRequest, ResumeJobRequest__Output as _timelane_v1_ResumeJobRequest__Output } from '../../timelane/v1/ResumeJobRequest.js';
import type { ResumeJobResponse as _timelane_v1_ResumeJobResponse, ResumeJobResponse__Output as _timelane_v1_ResumeJobResponse__Output } from '../../timelane/v1/ResumeJobResponse.js';
import type { ScheduleBatchRequest as _timelane_v1_ScheduleBatchRequest, ScheduleBatchRequest__Output as _timelane_v1_ScheduleBatchRequest__Output } from '../../timelane/v1/ScheduleBatchRequest.js';
import type { ScheduleBatchResponse as _timelane_v1_ScheduleBatchResponse, ScheduleBatchResponse__Output as _timelane_v1_ScheduleBatchResponse__Output } from '../../timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleRequest as _timelane_v1_ScheduleRequest, ScheduleRequest__Output as _timelane_v1_ScheduleRequest__Output } from '../../timelane/v1/ScheduleRequest.js';
import type { ScheduleResponse as _timelane_v1_ScheduleResponse, ScheduleResponse__Output as _timelane_v1_ScheduleResponse__Output } from '../../timelane/v1/ScheduleResponse.js';
import type { TriggerJobRequest as _timelane_v1_TriggerJobRequest, TriggerJobRequest__Output as _timelane_v1_TriggerJobRequest__Output } from '../../timelane/v1/TriggerJobRequest.js';
import type { TriggerJobResponse as _timelane_v1_TriggerJobResponse, TriggerJobResponse__Output as _timelane_v1_TriggerJobResponse__Output } from '../../timelane/v1/TriggerJobResponse.js';
import type { UpdateJobRequest as _timelane_v1_UpdateJobRequest, UpdateJobRequest__Output as _timelane_v1_UpdateJobRequest__Output } from '../../timelane/v1/UpdateJobRequest.js';
import type { UpdateJobResponse as _timelane_v1_UpdateJobResponse, UpdateJobResponse__Output as _timelane_v1_UpdateJobResponse__Output } from '../../timelane/v1/UpdateJobResponse.js';

export interface SchedulerClient extends grpc.Client {
  BackfillJob(argument: _timelane_v1_BackfillJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  BackfillJob(argument: _timelane_v1_BackfillJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  BackfillJob(argument: _timelane_v1_BackfillJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  BackfillJob(argument: _timelane_v1_BackfillJobRequest, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  backfillJob(argument: _timelane_v1_BackfillJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  backfillJob(argument: _timelane_v1_BackfillJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  backfillJob(argument: _timelane_v1_BackfillJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  backfillJob(argument: _timelane_v1_BackfillJobRequest, callback: grpc.requestCallback<_timelane_v1_BackfillJobResponse__Output>): grpc.ClientUnaryCall;
  
  CancelJob(argument: _timelane_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _timelane_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _timelane_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _timelane_v1_CancelJobRequest, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _timelane_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _timelane_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _timelane_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _timelane_v1_CancelJobRequest, callback: grpc.requestCallback<_timelane_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  
  GetJob(argument: _timelane_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _timelane_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _timelane_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  GetJob(argument: _timelane_v1_GetJobRequest, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  getJob(argument: _timelane_v1_GetJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  getJob(argument: _timelane_v1_GetJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  getJob(argument: _timelane_v1_GetJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  getJob(argument: _timelane_v1_GetJobRequest, callback: grpc.requestCallback<_timelane_v1_GetJobResponse__Output>): grpc.ClientUnaryCall;
  
  GetRun(argument: _timelane_v1_GetRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _timelane_v1_GetRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _timelane_v1_GetRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  GetRun(argument: _timelane_v1_GetRunRequest, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _timelane_v1_GetRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _timelane_v1_GetRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _timelane_v1_GetRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  getRun(argument: _timelane_v1_GetRunRequest, callback: grpc.requestCallback<_timelane_v1_GetRunResponse__Output>): grpc.ClientUnaryCall;
  
  ListDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  ListDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  ListDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  ListDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  listDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  listDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  listDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  listDeadRuns(argument: _timelane_v1_ListDeadRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListDeadRunsResponse__Output>): grpc.ClientUnaryCall;
  
  ListJobs(argument: _timelane_v1_ListJobsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _timelane_v1_ListJobsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _timelane_v1_ListJobsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _timelane_v1_ListJobsRequest, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _timelane_v1_ListJobsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _timelane_v1_ListJobsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _timelane_v1_ListJobsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _timelane_v1_ListJobsRequest, callback: grpc.requestCallback<_timelane_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  
  ListQueues(argument: _timelane_v1_ListQueuesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListQueues(argument: _timelane_v1_ListQueuesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListQueues(argument: _timelane_v1_ListQueuesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  ListQueues(argument: _timelane_v1_ListQueuesRequest, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  listQueues(argument: _timelane_v1_ListQueuesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  listQueues(argument: _timelane_v1_ListQueuesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  listQueues(argument: _timelane_v1_ListQueuesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  listQueues(argument: _timelane_v1_ListQueuesRequest, callback: grpc.requestCallback<_timelane_v1_ListQueuesResponse__Output>): grpc.ClientUnaryCall;
  
  ListRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  
  PauseJob(argument: _timelane_v1_PauseJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  PauseJob(argument: _timelane_v1_PauseJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  PauseJob(argument: _timelane_v1_PauseJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  PauseJob(argument: _timelane_v1_PauseJobRequest, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  pauseJob(argument: _timelane_v1_PauseJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  pauseJob(argument: _timelane_v1_PauseJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  pauseJob(argument: _timelane_v1_PauseJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  pauseJob(argument: _timelane_v1_PauseJobRequest, callback: grpc.requestCallback<_timelane_v1_PauseJobResponse__Output>): grpc.ClientUnaryCall;
  
  ReplayRuns(argument: _timelane_v1_ReplayRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  ReplayRuns(argument: _timelane_v1_ReplayRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  ReplayRuns(argument: _timelane_v1_ReplayRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  ReplayRuns(argument: _timelane_v1_ReplayRunsRequest, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  replayRuns(argument: _timelane_v1_ReplayRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  replayRuns(argument: _timelane_v1_ReplayRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  replayRuns(argument: _timelane_v1_ReplayRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  replayRuns(argument: _timelane_v1_ReplayRunsRequest, callback: grpc.requestCallback<_timelane_v1_ReplayRunsResponse__Output>): grpc.ClientUnaryCall;
  
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  
  ResumeJob(argument: _timelane_v1_ResumeJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  ResumeJob(argument: _timelane_v1_ResumeJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  ResumeJob(argument: _timelane_v1_ResumeJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  ResumeJob(argument: _timelane_v1_ResumeJobRequest, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  resumeJob(argument: _timelane_v1_ResumeJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  resumeJob(argument: _timelane_v1_ResumeJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  resumeJob(argument: _timelane_v1_ResumeJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  resumeJob(argument: _timelane_v1_ResumeJobRequest, callback: grpc.requestCallback<_timelane_v1_ResumeJobResponse__Output>): grpc.ClientUnaryCall;
  
  Schedule(argument: _timelane_v1_ScheduleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  Schedule(argument: _timelane_v1_ScheduleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  Schedule(argument: _timelane_v1_ScheduleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  Schedule(argument: _timelane_v1_ScheduleRequest, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  schedule(argument: _timelane_v1_ScheduleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  schedule(argument: _timelane_v1_ScheduleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  schedule(argument: _timelane_v1_ScheduleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  schedule(argument: _timelane_v1_ScheduleRequest, callback: grpc.requestCallback<_timelane_v1_ScheduleResponse__Output>): grpc.ClientUnaryCall;
  
  ScheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  ScheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  ScheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  ScheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  scheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  scheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  scheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  scheduleBatch(argument: _timelane_v1_ScheduleBatchRequest, callback: grpc.requestCallback<_timelane_v1_ScheduleBatchResponse__Output>): grpc.ClientUnaryCall;
  
  TriggerJob(argument: _timelane_v1_TriggerJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  TriggerJob(argument: _timelane_v1_TriggerJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  TriggerJob(argument: _timelane_v1_TriggerJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  TriggerJob(argument: _timelane_v1_TriggerJobRequest, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  triggerJob(argument: _timelane_v1_TriggerJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  triggerJob(argument: _timelane_v1_TriggerJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  triggerJob(argument: _timelane_v1_TriggerJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  triggerJob(argument: _timelane_v1_TriggerJobRequest, callback: grpc.requestCallback<_timelane_v1_TriggerJobResponse__Output>): grpc.ClientUnaryCall;
  
  UpdateJob(argument: _timelane_v1_UpdateJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  UpdateJob(argument: _timelane_v1_UpdateJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  UpdateJob(argument: _timelane_v1_UpdateJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  UpdateJob(argument: _timelane_v1_UpdateJobRequest, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  updateJob(argument: _timelane_v1_UpdateJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  updateJob(argument: _timelane_v1_UpdateJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  updateJob(argument: _timelane_v1_UpdateJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  updateJob(argument: _timelane_v1_UpdateJobRequest, callback: grpc.requestCallback<_timelane_v1_UpdateJobResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SchedulerHandlers extends grpc.UntypedServiceImplementation {
  BackfillJob: grpc.handleUnaryCall<_timelane_v1_BackfillJobRequest__Output, _timelane_v1_BackfillJobResponse>;
  
  CancelJob: grpc.handleUnaryCall<_timelane_v1_CancelJobRequest__Output, _timelane_v1_CancelJobResponse>;
  
  GetJob: grpc.handleUnaryCall<_timelane_v1_GetJobRequest__Output, _timelane_v1_GetJobResponse>;
  
  GetRun: grpc.handleUnaryCall<_timelane_v1_GetRunRequest__Output, _timelane_v1_GetRunResponse>;
  
  ListDeadRuns: grpc.handleUnaryCall<_timelane_v1_ListDeadRunsRequest__Output, _timelane_v1_ListDeadRunsResponse>;
  
  ListJobs: grpc.handleUnaryCall<_timelane_v1_ListJobsRequest__Output, _timelane_v1_ListJobsResponse>;
  
  ListQueues: grpc.handleUnaryCall<_timelane_v1_ListQueuesRequest__Output, _timelane_v1_ListQueuesResponse>;
  
  ListRuns: grpc.handleUnaryCall<_timelane_v1_ListRunsRequest__Output, _timelane_v1_ListRunsResponse>;
  
  PauseJob: grpc.handleUnaryCall<_timelane_v1_PauseJobRequest__Output, _timelane_v1_PauseJobResponse>;
  
  ReplayRuns: grpc.handleUnaryCall<_timelane_v1_ReplayRunsRequest__Output, _timelane_v1_ReplayRunsResponse>;
  
  RescheduleJob: grpc.handleUnaryCall<_timelane_v1_RescheduleJobRequest__Output, _timelane_v1_RescheduleJobResponse>;
  
  ResumeJob: grpc.handleUnaryCall<_timelane_v1_ResumeJobRequest__Output, _timelane_v1_ResumeJobResponse>;
  
  Schedule: grpc.handleUnaryCall<_timelane_v1_ScheduleRequest__Output, _timelane_v1_ScheduleResponse>;
  
  ScheduleBatch: grpc.handleUnaryCall<_timelane_v1_ScheduleBatchRequest__Output, _timelane_v1_ScheduleBatchResponse>;
  
  TriggerJob: grpc.handleUnaryCall<_timelane_v1_TriggerJobRequest__Output, _timelane_v1_TriggerJobResponse>;
  
  UpdateJob: grpc.handleUnaryCall<_timelane_v1_UpdateJobRequest__Output, _timelane_v1_UpdateJobResponse>;
  
}

export interface SchedulerDefinition extends grpc.ServiceDefinition {
  BackfillJob: MethodDefinition<_timelane_v1_BackfillJobRequest, _timelane_v1_BackfillJobResponse, _timelane_v1_BackfillJobRequest__Output, _timelane_v1_BackfillJobResponse__Output>
  CancelJob: MethodDefinition<_timelane_v1_CancelJobRequest, _timelane_v1_CancelJobResponse, _timelane_v1_CancelJobRequest__Output, _timelane_v1_CancelJobResponse__Output>
  GetJob: MethodDefinition<_timelane_v1_GetJobRequest, _timelane_v1_GetJobResponse, _timelane_v1_GetJobRequest__Output, _timelane_v1_GetJobResponse__Output>
  GetRun: MethodDefinition<_timelane_v1_GetRunRequest, _timelane_v1_GetRunResponse, _timelane_v1_GetRunRequest__Output, _timelane_v1_GetRunResponse__Output>
  ListDeadRuns: MethodDefinition<_timelane_v1_ListDeadRunsRequest, _timelane_v1_ListDeadRunsResponse, _timelane_v1_ListDeadRunsRequest__Output, _timelane_v1_ListDeadRunsResponse__Output>
  ListJobs: MethodDefinition<_timelane_v1_ListJobsRequest, _timelane_v1_ListJobsResponse, _timelane_v1_ListJobsRequest__Output, _timelane_v1_ListJobsResponse__Output>
  ListQueues: MethodDefinition<_timelane_v1_ListQueuesRequest, _timelane_v1_ListQueuesResponse, _timelane_v1_ListQueuesRequest__Output, _timelane_v1_ListQueuesResponse__Output>
  ListRuns: MethodDefinition<_timelane_v1_ListRunsRequest, _timelane_v1_ListRunsResponse, _timelane_v1_ListRunsRequest__Output, _timelane_v1_ListRunsResponse__Output>
  PauseJob: MethodDefinition<_timelane_v1_PauseJobRequest, _timelane_v1_PauseJobResponse, _timelane_v1_PauseJobRequest__Output, _timelane_v1_PauseJobResponse__Output>
  ReplayRuns: MethodDefinition<_timelane_v1_ReplayRunsRequest, _timelane_v1_ReplayRunsResponse, _timelane_v1_ReplayRunsRequest__Output, _timelane_v1_ReplayRunsResponse__Output>
  RescheduleJob: MethodDefinition<_timelane_v1_RescheduleJobRequest, _timelane_v1_RescheduleJobResponse, _timelane_v1_RescheduleJobRequest__Output, _timelane_v1_RescheduleJobResponse__Output>
  ResumeJob: MethodDefinition<_timelane_v1_ResumeJobRequest, _timelane_v1_ResumeJobResponse, _timelane_v1_ResumeJobRequest__Output, _timelane_v1_ResumeJobResponse__Output>
  Schedule: MethodDefinition<_timelane_v1_ScheduleRequest, _timelane_v1_ScheduleResponse, _timelane_v1_ScheduleRequest__Output, _timelane_v1_ScheduleResponse__Output>
  ScheduleBatch: MethodDefinition<_timelane_v1_ScheduleBatchRequest, _timelane_v1_ScheduleBatchResponse, _timelane_v1_ScheduleBatchRequest__Output, _timelane_v1_ScheduleBatchResponse__Output>
  TriggerJob: MethodDefinition<_timelane_v1_TriggerJobRequest, _timelane_v1_TriggerJobResponse, _timelane_v1_TriggerJobRequest__Output, _timelane_v1_TriggerJobResponse__Output>
  UpdateJob: MethodDefinition<_timelane_v1_UpdateJobRequest, _timelane_v1_UpdateJobResponse, _timelane_v1_UpdateJobRequest__Output, _timelane_v1_UpdateJobResponse__Output>
}
