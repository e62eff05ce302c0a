// Original file: proto/timelane/v1/timelane.proto


export interface ListMembersRequest {
}

export interface ListMembersRequest__Output {
}
