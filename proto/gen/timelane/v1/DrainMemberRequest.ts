// Original file: proto/timelane/v1/timelane.proto


export interface DrainMemberRequest {
  'memberId'?: (string);
  'undo'?: (boolean);
  'timeoutMs'?: (number);
}

export interface DrainMemberRequest__Output {
  'memberId': (string);
  'undo': (boolean);
  'timeoutMs': (number);
}
