// Original file: proto/timelane/v1/timelane.proto


export interface ListQueueLimitsRequest {
}

export interface ListQueueLimitsRequest__Output {
}
