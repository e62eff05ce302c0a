// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { WorkRequest as _timelane_v1_WorkRequest, WorkRequest__Output as _timelane_v1_WorkRequest__Output } from '../../timelane/v1/WorkRequest.js';
import type { WorkResponse as _timelane_v1_WorkResponse, WorkResponse__Output as _timelane_v1_WorkResponse__Output } from '../../timelane/v1/WorkResponse.js';

export interface WorkerClient extends grpc.Client {
  Work(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_timelane_v1_WorkRequest, _timelane_v1_WorkResponse__Output>;
  Work(options?: grpc.CallOptions): grpc.ClientDuplexStream<_timelane_v1_WorkRequest, _timelane_v1_WorkResponse__Output>;
  work(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_timelane_v1_WorkRequest, _timelane_v1_WorkResponse__Output>;
  work(options?: grpc.CallOptions): grpc.ClientDuplexStream<_timelane_v1_WorkRequest, _timelane_v1_WorkResponse__Output>;
  
}

export interface WorkerHandlers extends grpc.UntypedServiceImplementation {
  Work: grpc.handleBidiStreamingCall<_timelane_v1_WorkRequest__Output, _timelane_v1_WorkResponse>;
  
}

export interface WorkerDefinition extends grpc.ServiceDefinition {
  Work: MethodDefinition<_timelane_v1_WorkRequest, _timelane_v1_WorkResponse, _timelane_v1_WorkRequest__Output, _timelane_v1_WorkResponse__Output>
}
