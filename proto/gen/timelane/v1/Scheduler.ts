// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CancelJobRequest as _timelane_v1_CancelJobRequest, CancelJobRequest__Output as _timelane_v1_CancelJobRequest__Output } from '../../timelane/v1/CancelJobRequest.js';
import type { CancelJobResponse as _timelane_v1_CancelJobResponse, CancelJobResponse__Output as _timelane_v1_CancelJobResponse__Output } from '../../timelane/v1/CancelJobResponse.js';
import type { GetJobRequest as _timelane_v1_GetJobRequest, GetJobRequest__Output as _timelane_v1_GetJobRequest__Output } from '../../timelane/v1/GetJobRequest.js';
import type { GetJobResponse as _timelane_v1_GetJobResponse, GetJobResponse__Output as _timelane_v1_GetJobResponse__Output } from '../../timelane/v1/GetJobResponse.js';
import type { GetRunRequest as _timelane_v1_GetRunRequest, GetRunRequest__Output as _timelane_v1_GetRunRequest__Output } from '../../timelane/v1/GetRunRequest.js';
import type { GetRunResponse as _timelane_v1_GetRunResponse, GetRunResponse__Output as _timelane_v1_GetRunResponse__Output } from '../../timelane/v1/GetRunResponse.js';
import type { ListRunsRequest as _timelane_v1_ListRunsRequest, ListRunsRequest__Output as _timelane_v1_ListRunsRequest__Output } from '../../timelane/v1/ListRunsRequest.js';
import type { ListRunsResponse as _timelane_v1_ListRunsResponse, ListRunsResponse__Output as _timelane_v1_ListRunsResponse__Output } from '../../timelane/v1/ListRunsResponse.js';
import type { RescheduleJobRequest as _timelane_v1_RescheduleJobRequest, RescheduleJobRequest__Output as _timelane_v1_RescheduleJobRequest__Output } from '../../timelane/v1/RescheduleJobRequest.js';
import type { RescheduleJobResponse as _timelane_v1_RescheduleJobResponse, RescheduleJobResponse__Output as _timelane_v1_RescheduleJobResponse__Output } from '../../timelane/v1/RescheduleJobResponse.js';
import type { ScheduleBatchRequest as _timelane_v1_ScheduleBatchRequest, ScheduleBatchRequest__Output as _timelane_v1_ScheduleBatchRequest__Output } from '../../timelane/v1/ScheduleBatchRequest.js';
import type { ScheduleBatchResponse as _timelane_v1_ScheduleBatchResponse, ScheduleBatchResponse__Output as _timelane_v1_ScheduleBatchResponse__Output } from '../../timelane/v1/ScheduleBatchResponse.js';
import type { ScheduleRequest as _timelane_v1_ScheduleRequest, ScheduleRequest__Output as _timelane_v1_ScheduleRequest__Output } from '../../timelane/v1/ScheduleRequest.js';
import type { ScheduleResponse as _timelane_v1_ScheduleResponse, ScheduleResponse__Output as _timelane_v1_ScheduleResponse__Output } from '../../timelane/v1/ScheduleResponse.js';

export interface SchedulerClient extends grpc.Client {
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
  
  ListRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  ListRuns(argument: _timelane_v1_ListRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  listRuns(argument: _timelane_v1_ListRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListRunsResponse__Output>): grpc.ClientUnaryCall;
  
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  RescheduleJob(argument: _timelane_v1_RescheduleJobRequest, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  rescheduleJob(argument: _timelane_v1_RescheduleJobRequest, callback: grpc.requestCallback<_timelane_v1_RescheduleJobResponse__Output>): grpc.ClientUnaryCall;
  
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
  
}

export interface SchedulerHandlers extends grpc.UntypedServiceImplementation {
  CancelJob: grpc.handleUnaryCall<_timelane_v1_CancelJobRequest__Output, _timelane_v1_CancelJobResponse>;
  
  GetJob: grpc.handleUnaryCall<_timelane_v1_GetJobRequest__Output, _timelane_v1_GetJobResponse>;
  
  GetRun: grpc.handleUnaryCall<_timelane_v1_GetRunRequest__Output, _timelane_v1_GetRunResponse>;
  
  ListRuns: grpc.handleUnaryCall<_timelane_v1_ListRunsRequest__Output, _timelane_v1_ListRunsResponse>;
  
  RescheduleJob: grpc.handleUnaryCall<_timelane_v1_RescheduleJobRequest__Output, _timelane_v1_RescheduleJobResponse>;
  
  Schedule: grpc.handleUnaryCall<_timelane_v1_ScheduleRequest__Output, _timelane_v1_ScheduleResponse>;
  
  ScheduleBatch: grpc.handleUnaryCall<_timelane_v1_ScheduleBatchRequest__Output, _timelane_v1_ScheduleBatchResponse>;
  
}

export interface SchedulerDefinition extends grpc.ServiceDefinition {
  CancelJob: MethodDefinition<_timelane_v1_CancelJobRequest, _timelane_v1_CancelJobResponse, _timelane_v1_CancelJobRequest__Output, _timelane_v1_CancelJobResponse__Output>
  GetJob: MethodDefinition<_timelane_v1_GetJobRequest, _timelane_v1_GetJobResponse, _timelane_v1_GetJobRequest__Output, _timelane_v1_GetJobResponse__Output>
  GetRun: MethodDefinition<_timelane_v1_GetRunRequest, _timelane_v1_GetRunResponse, _timelane_v1_GetRunRequest__Output, _timelane_v1_GetRunResponse__Output>
  ListRuns: MethodDefinition<_timelane_v1_ListRunsRequest, _timelane_v1_ListRunsResponse, _timelane_v1_ListRunsRequest__Output, _timelane_v1_ListRunsResponse__Output>
  RescheduleJob: MethodDefinition<_timelane_v1_RescheduleJobRequest, _timelane_v1_RescheduleJobResponse, _timelane_v1_RescheduleJobRequest__Output, _timelane_v1_RescheduleJobResponse__Output>
  Schedule: MethodDefinition<_timelane_v1_ScheduleRequest, _timelane_v1_ScheduleResponse, _timelane_v1_ScheduleRequest__Output, _timelane_v1_ScheduleResponse__Output>
  ScheduleBatch: MethodDefinition<_timelane_v1_ScheduleBatchRequest, _timelane_v1_ScheduleBatchResponse, _timelane_v1_ScheduleBatchRequest__Output, _timelane_v1_ScheduleBatchResponse__Output>
}
