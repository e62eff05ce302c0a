// Original file: proto/timelane/v1/timelane.proto


export interface Drain {
}

export interface Drain__Output {
}
