// Original file: proto/timelane/v1/timelane.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DrainMemberRequest as _timelane_v1_DrainMemberRequest, DrainMemberRequest__Output as _timelane_v1_DrainMemberRequest__Output } from '../../timelane/v1/DrainMemberRequest.js';
import type { DrainMemberResponse as _timelane_v1_DrainMemberResponse, DrainMemberResponse__Output as _timelane_v1_DrainMemberResponse__Output } from '../../timelane/v1/DrainMemberResponse.js';
import type { ListMembersRequest as _timelane_v1_ListMembersRequest, ListMembersRequest__Output as _timelane_v1_ListMembersRequest__Output } from '../../timelane/v1/ListMembersRequest.js';
import type { ListMembersResponse as _timelane_v1_ListMembersResponse, ListMembersResponse__Output as _timelane_v1_ListMembersResponse__Output } from '../../timelane/v1/ListMembersResponse.js';
import type { ListQueueLimitsRequest as _timelane_v1_ListQueueLimitsRequest, ListQueueLimitsRequest__Output as _timelane_v1_ListQueueLimitsRequest__Output } from '../../timelane/v1/ListQueueLimitsRequest.js';
import type { ListQueueLimitsResponse as _timelane_v1_ListQueueLimitsResponse, ListQueueLimitsResponse__Output as _timelane_v1_ListQueueLimitsResponse__Output } from '../../timelane/v1/ListQueueLimitsResponse.js';
import type { ListShardsRequest as _timelane_v1_ListShardsRequest, ListShardsRequest__Output as _timelane_v1_ListShardsRequest__Output } from '../../timelane/v1/ListShardsRequest.js';
import type { ListShardsResponse as _timelane_v1_ListShardsResponse, ListShardsResponse__Output as _timelane_v1_ListShardsResponse__Output } from '../../timelane/v1/ListShardsResponse.js';
import type { MoveShardRequest as _timelane_v1_MoveShardRequest, MoveShardRequest__Output as _timelane_v1_MoveShardRequest__Output } from '../../timelane/v1/MoveShardRequest.js';
import type { MoveShardResponse as _timelane_v1_MoveShardResponse, MoveShardResponse__Output as _timelane_v1_MoveShardResponse__Output } from '../../timelane/v1/MoveShardResponse.js';
import type { RebalanceRequest as _timelane_v1_RebalanceRequest, RebalanceRequest__Output as _timelane_v1_RebalanceRequest__Output } from '../../timelane/v1/RebalanceRequest.js';
import type { RebalanceResponse as _timelane_v1_RebalanceResponse, RebalanceResponse__Output as _timelane_v1_RebalanceResponse__Output } from '../../timelane/v1/RebalanceResponse.js';
import type { SetQueueLimitsRequest as _timelane_v1_SetQueueLimitsRequest, SetQueueLimitsRequest__Output as _timelane_v1_SetQueueLimitsRequest__Output } from '../../timelane/v1/SetQueueLimitsRequest.js';
import type { SetQueueLimitsResponse as _timelane_v1_SetQueueLimitsResponse, SetQueueLimitsResponse__Output as _timelane_v1_SetQueueLimitsResponse__Output } from '../../timelane/v1/SetQueueLimitsResponse.js';

export interface AdminClient extends grpc.Client {
  DrainMember(argument: _timelane_v1_DrainMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  DrainMember(argument: _timelane_v1_DrainMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  DrainMember(argument: _timelane_v1_DrainMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  DrainMember(argument: _timelane_v1_DrainMemberRequest, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  drainMember(argument: _timelane_v1_DrainMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  drainMember(argument: _timelane_v1_DrainMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  drainMember(argument: _timelane_v1_DrainMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  drainMember(argument: _timelane_v1_DrainMemberRequest, callback: grpc.requestCallback<_timelane_v1_DrainMemberResponse__Output>): grpc.ClientUnaryCall;
  
  ListMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  ListMembers(argument: _timelane_v1_ListMembersRequest, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  listMembers(argument: _timelane_v1_ListMembersRequest, callback: grpc.requestCallback<_timelane_v1_ListMembersResponse__Output>): grpc.ClientUnaryCall;
  
  ListQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  ListQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  listQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  listQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  listQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  listQueueLimits(argument: _timelane_v1_ListQueueLimitsRequest, callback: grpc.requestCallback<_timelane_v1_ListQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  
  ListShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  ListShards(argument: _timelane_v1_ListShardsRequest, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  listShards(argument: _timelane_v1_ListShardsRequest, callback: grpc.requestCallback<_timelane_v1_ListShardsResponse__Output>): grpc.ClientUnaryCall;
  
  MoveShard(argument: _timelane_v1_MoveShardRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  MoveShard(argument: _timelane_v1_MoveShardRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  MoveShard(argument: _timelane_v1_MoveShardRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  MoveShard(argument: _timelane_v1_MoveShardRequest, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  moveShard(argument: _timelane_v1_MoveShardRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  moveShard(argument: _timelane_v1_MoveShardRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  moveShard(argument: _timelane_v1_MoveShardRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  moveShard(argument: _timelane_v1_MoveShardRequest, callback: grpc.requestCallback<_timelane_v1_MoveShardResponse__Output>): grpc.ClientUnaryCall;
  
  Rebalance(argument: _timelane_v1_RebalanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  Rebalance(argument: _timelane_v1_RebalanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  Rebalance(argument: _timelane_v1_RebalanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  Rebalance(argument: _timelane_v1_RebalanceRequest, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  rebalance(argument: _timelane_v1_RebalanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  rebalance(argument: _timelane_v1_RebalanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  rebalance(argument: _timelane_v1_RebalanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  rebalance(argument: _timelane_v1_RebalanceRequest, callback: grpc.requestCallback<_timelane_v1_RebalanceResponse__Output>): grpc.ClientUnaryCall;
  
  SetQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  SetQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  SetQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  SetQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  setQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  setQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  setQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  setQueueLimits(argument: _timelane_v1_SetQueueLimitsRequest, callback: grpc.requestCallback<_timelane_v1_SetQueueLimitsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AdminHandlers extends grpc.UntypedServiceImplementation {
  DrainMember: grpc.handleUnaryCall<_timelane_v1_DrainMemberRequest__Output, _timelane_v1_DrainMemberResponse>;
  
  ListMembers: grpc.handleUnaryCall<_timelane_v1_ListMembersRequest__Output, _timelane_v1_ListMembersResponse>;
  
  ListQueueLimits: grpc.handleUnaryCall<_timelane_v1_ListQueueLimitsRequest__Output, _timelane_v1_ListQueueLimitsResponse>;
  
  ListShards: grpc.handleUnaryCall<_timelane_v1_ListShardsRequest__Output, _timelane_v1_ListShardsResponse>;
  
  MoveShard: grpc.handleUnaryCall<_timelane_v1_MoveShardRequest__Output, _timelane_v1_MoveShardResponse>;
  
  Rebalance: grpc.handleUnaryCall<_timelane_v1_RebalanceRequest__Output, _timelane_v1_RebalanceResponse>;
  
  SetQueueLimits: grpc.handleUnaryCall<_timelane_v1_SetQueueLimitsRequest__Output, _timelane_v1_SetQueueLimitsResponse>;
  
}

export interface AdminDefinition extends grpc.ServiceDefinition {
  DrainMember: MethodDefinition<_timelane_v1_DrainMemberRequest, _timelane_v1_DrainMemberResponse, _timelane_v1_DrainMemberRequest__Output, _timelane_v1_DrainMemberResponse__Output>
  ListMembers: MethodDefinition<_timelane_v1_ListMembersRequest, _timelane_v1_ListMembersResponse, _timelane_v1_ListMembersRequest__Output, _timelane_v1_ListMembersResponse__Output>
  ListQueueLimits: MethodDefinition<_timelane_v1_ListQueueLimitsRequest, _timelane_v1_ListQueueLimitsResponse, _timelane_v1_ListQueueLimitsRequest__Output, _timelane_v1_ListQueueLimitsResponse__Output>
  ListShards: MethodDefinition<_timelane_v1_ListShardsRequest, _timelane_v1_ListShardsResponse, _timelane_v1_ListShardsRequest__Output, _timelane_v1_ListShardsResponse__Output>
  MoveShard: MethodDefinition<_timelane_v1_MoveShardRequest, _timelane_v1_MoveShardResponse, _timelane_v1_MoveShardRequest__Output, _timelane_v1_MoveShardResponse__Output>
  Rebalance: MethodDefinition<_timelane_v1_RebalanceRequest, _timelane_v1_RebalanceResponse, _timelane_v1_RebalanceRequest__Output, _timelane_v1_RebalanceResponse__Output>
  SetQueueLimits: MethodDefinition<_timelane_v1_SetQueueLimitsRequest, _timelane_v1_SetQueueLimitsResponse, _timelane_v1_SetQueueLimitsRequest__Output, _timelane_v1_SetQueueLimitsResponse__Output>
}
