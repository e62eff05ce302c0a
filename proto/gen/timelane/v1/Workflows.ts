// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CancelWorkflowRunRequest as _timelane_v1_CancelWorkflowRunRequest, CancelWorkflowRunRequest__Output as _timelane_v1_CancelWorkflowRunRequest__Output } from '../../timelane/v1/CancelWorkflowRunRequest.js';
import type { CancelWorkflowRunResponse as _timelane_v1_CancelWorkflowRunResponse, CancelWorkflowRunResponse__Output as _timelane_v1_CancelWorkflowRunResponse__Output } from '../../timelane/v1/CancelWorkflowRunResponse.js';
import type { GetWorkflowRunRequest as _timelane_v1_GetWorkflowRunRequest, GetWorkflowRunRequest__Output as _timelane_v1_GetWorkflowRunRequest__Output } from '../../timelane/v1/GetWorkflowRunRequest.js';
import type { GetWorkflowRunResponse as _timelane_v1_GetWorkflowRunResponse, GetWorkflowRunResponse__Output as _timelane_v1_GetWorkflowRunResponse__Output } from '../../timelane/v1/GetWorkflowRunResponse.js';
import type { ListWorkflowRunsRequest as _timelane_v1_ListWorkflowRunsRequest, ListWorkflowRunsRequest__Output as _timelane_v1_ListWorkflowRunsRequest__Output } from '../../timelane/v1/ListWorkflowRunsRequest.js';
import type { ListWorkflowRunsResponse as _timelane_v1_ListWorkflowRunsResponse, ListWorkflowRunsResponse__Output as _timelane_v1_ListWorkflowRunsResponse__Output } from '../../timelane/v1/ListWorkflowRunsResponse.js';
import type { PutWorkflowRequest as _timelane_v1_PutWorkflowRequest, PutWorkflowRequest__Output as _timelane_v1_PutWorkflowRequest__Output } from '../../timelane/v1/PutWorkflowRequest.js';
import type { PutWorkflowResponse as _timelane_v1_PutWorkflowResponse, PutWorkflowResponse__Output as _timelane_v1_PutWorkflowResponse__Output } from '../../timelane/v1/PutWorkflowResponse.js';
import type { RetryWorkflowRunRequest as _timelane_v1_RetryWorkflowRunRequest, RetryWorkflowRunRequest__Output as _timelane_v1_RetryWorkflowRunRequest__Output } from '../../timelane/v1/RetryWorkflowRunRequest.js';
import type { RetryWorkflowRunResponse as _timelane_v1_RetryWorkflowRunResponse, RetryWorkflowRunResponse__Output as _timelane_v1_RetryWorkflowRunResponse__Output } from '../../timelane/v1/RetryWorkflowRunResponse.js';
import type { StartWorkflowRequest as _timelane_v1_StartWorkflowRequest, StartWorkflowRequest__Output as _timelane_v1_StartWorkflowRequest__Output } from '../../timelane/v1/StartWorkflowRequest.js';
import type { StartWorkflowResponse as _timelane_v1_StartWorkflowResponse, StartWorkflowResponse__Output as _timelane_v1_StartWorkflowResponse__Output } from '../../timelane/v1/StartWorkflowResponse.js';
import type { StartWorkflowsRequest as _timelane_v1_StartWorkflowsRequest, StartWorkflowsRequest__Output as _timelane_v1_StartWorkflowsRequest__Output } from '../../timelane/v1/StartWorkflowsRequest.js';
import type { StartWorkflowsResponse as _timelane_v1_StartWorkflowsResponse, StartWorkflowsResponse__Output as _timelane_v1_StartWorkflowsResponse__Output } from '../../timelane/v1/StartWorkflowsResponse.js';

export interface WorkflowsClient extends grpc.Client {
  CancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  CancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  CancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  CancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  cancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  cancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  cancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  cancelWorkflowRun(argument: _timelane_v1_CancelWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_CancelWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  
  GetWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  GetWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  GetWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  GetWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  getWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  getWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  getWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  getWorkflowRun(argument: _timelane_v1_GetWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_GetWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  
  ListWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  ListWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  ListWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  ListWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  listWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  listWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  listWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  listWorkflowRuns(argument: _timelane_v1_ListWorkflowRunsRequest, callback: grpc.requestCallback<_timelane_v1_ListWorkflowRunsResponse__Output>): grpc.ClientUnaryCall;
  
  PutWorkflow(argument: _timelane_v1_PutWorkflowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  PutWorkflow(argument: _timelane_v1_PutWorkflowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  PutWorkflow(argument: _timelane_v1_PutWorkflowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  PutWorkflow(argument: _timelane_v1_PutWorkflowRequest, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  putWorkflow(argument: _timelane_v1_PutWorkflowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  putWorkflow(argument: _timelane_v1_PutWorkflowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  putWorkflow(argument: _timelane_v1_PutWorkflowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  putWorkflow(argument: _timelane_v1_PutWorkflowRequest, callback: grpc.requestCallback<_timelane_v1_PutWorkflowResponse__Output>): grpc.ClientUnaryCall;
  
  RetryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  RetryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  RetryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  RetryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  retryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  retryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  retryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  retryWorkflowRun(argument: _timelane_v1_RetryWorkflowRunRequest, callback: grpc.requestCallback<_timelane_v1_RetryWorkflowRunResponse__Output>): grpc.ClientUnaryCall;
  
  StartWorkflow(argument: _timelane_v1_StartWorkflowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflow(argument: _timelane_v1_StartWorkflowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflow(argument: _timelane_v1_StartWorkflowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflow(argument: _timelane_v1_StartWorkflowRequest, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  startWorkflow(argument: _timelane_v1_StartWorkflowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  startWorkflow(argument: _timelane_v1_StartWorkflowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  startWorkflow(argument: _timelane_v1_StartWorkflowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  startWorkflow(argument: _timelane_v1_StartWorkflowRequest, callback: grpc.requestCallback<_timelane_v1_StartWorkflowResponse__Output>): grpc.ClientUnaryCall;
  
  StartWorkflows(argument: _timelane_v1_StartWorkflowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflows(argument: _timelane_v1_StartWorkflowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflows(argument: _timelane_v1_StartWorkflowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  StartWorkflows(argument: _timelane_v1_StartWorkflowsRequest, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  startWorkflows(argument: _timelane_v1_StartWorkflowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  startWorkflows(argument: _timelane_v1_StartWorkflowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  startWorkflows(argument: _timelane_v1_StartWorkflowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  startWorkflows(argument: _timelane_v1_StartWorkflowsRequest, callback: grpc.requestCallback<_timelane_v1_StartWorkflowsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface WorkflowsHandlers extends grpc.UntypedServiceImplementation {
  CancelWorkflowRun: grpc.handleUnaryCall<_timelane_v1_CancelWorkflowRunRequest__Output, _timelane_v1_CancelWorkflowRunResponse>;
  
  GetWorkflowRun: grpc.handleUnaryCall<_timelane_v1_GetWorkflowRunRequest__Output, _timelane_v1_GetWorkflowRunResponse>;
  
  ListWorkflowRuns: grpc.handleUnaryCall<_timelane_v1_ListWorkflowRunsRequest__Output, _timelane_v1_ListWorkflowRunsResponse>;
  
  PutWorkflow: grpc.handleUnaryCall<_timelane_v1_PutWorkflowRequest__Output, _timelane_v1_PutWorkflowResponse>;
  
  RetryWorkflowRun: grpc.handleUnaryCall<_timelane_v1_RetryWorkflowRunRequest__Output, _timelane_v1_RetryWorkflowRunResponse>;
  
  StartWorkflow: grpc.handleUnaryCall<_timelane_v1_StartWorkflowRequest__Output, _timelane_v1_StartWorkflowResponse>;
  
  StartWorkflows: grpc.handleUnaryCall<_timelane_v1_StartWorkflowsRequest__Output, _timelane_v1_StartWorkflowsResponse>;
  
}

export interface WorkflowsDefinition extends grpc.ServiceDefinition {
  CancelWorkflowRun: MethodDefinition<_timelane_v1_CancelWorkflowRunRequest, _timelane_v1_CancelWorkflowRunResponse, _timelane_v1_CancelWorkflowRunRequest__Output, _timelane_v1_CancelWorkflowRunResponse__Output>
  GetWorkflowRun: MethodDefinition<_timelane_v1_GetWorkflowRunRequest, _timelane_v1_GetWorkflowRunResponse, _timelane_v1_GetWorkflowRunRequest__Output, _timelane_v1_GetWorkflowRunResponse__Output>
  ListWorkflowRuns: MethodDefinition<_timelane_v1_ListWorkflowRunsRequest, _timelane_v1_ListWorkflowRunsResponse, _timelane_v1_ListWorkflowRunsRequest__Output, _timelane_v1_ListWorkflowRunsResponse__Output>
  PutWorkflow: MethodDefinition<_timelane_v1_PutWorkflowRequest, _timelane_v1_PutWorkflowResponse, _timelane_v1_PutWorkflowRequest__Output, _timelane_v1_PutWorkflowResponse__Output>
  RetryWorkflowRun: MethodDefinition<_timelane_v1_RetryWorkflowRunRequest, _timelane_v1_RetryWorkflowRunResponse, _timelane_v1_RetryWorkflowRunRequest__Output, _timelane_v1_RetryWorkflowRunResponse__Output>
  StartWorkflow: MethodDefinition<_timelane_v1_StartWorkflowRequest, _timelane_v1_StartWorkflowResponse, _timelane_v1_StartWorkflowRequest__Output, _timelane_v1_StartWorkflowResponse__Output>
  StartWorkflows: MethodDefinition<_timelane_v1_StartWorkflowsRequest, _timelane_v1_StartWorkflowsResponse, _timelane_v1_StartWorkflowsRequest__Output, _timelane_v1_StartWorkflowsResponse__Output>
}
