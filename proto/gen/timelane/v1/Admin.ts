// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ListMembersRequest as _timelane_v1_ListMembersRequest, ListMembersRequest__Output as _timelane_v1_ListMembersRequest__Output } from '../../timelane/v1/ListMembersRequest.js';
import type { ListMembersResponse as _timelane_v1_ListMembersResponse, ListMembersResponse__Output as _timelane_v1_ListMembersResponse__Output } from '../../timelane/v1/ListMembersResponse.js';
import type { ListShardsRequest as _timelane_v1_ListShardsRequest, ListShardsRequest__Output as _timelane_v1_ListShardsRequest__Output } from '../../timelane/v1/ListShardsRequest.js';
import type { ListShardsResponse as _timelane_v1_ListShardsResponse, ListShardsResponse__Output as _timelane_v1_ListShardsResponse__Output } from '../../timelane/v1/ListShardsResponse.js';

export interface AdminClient extends grpc.Client {
  ListMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  
  ListShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AdminHandlers extends grpc.UntypedServiceImplementation {
  ListMembers: grpc.handleUnaryCall<_timelane_v1_ListMembersRequest__Output, _timelane_v1_ListMembersResponse>;
  
  ListShards: grpc.handleUnaryCall<_timelane_v1_ListShardsRequest__Output, _timelane_v1_ListShardsResponse>;
  
}

export interface AdminDefinition extends grpc.ServiceDefinition {
  ListMembers: MethodDefinition<_timelane_v1_ListMembersRequest, _timelane_v1_ListMembersResponse, _timelane_v1_ListMembersRequest__Output, _timelane_v1_ListMembersResponse__Output>
  ListShards: MethodDefinition<_timelane_v1_ListShardsRequest, _timelane_v1_ListShardsResponse, _timelane_v1_ListShardsRequest__Output, _timelane_v1_ListShardsResponse__Output>
}
