// Original file: proto/timelane/v1/timelane.proto


export interface ListShardsRequest {
}

export interface ListShardsRequest__Output {
}
