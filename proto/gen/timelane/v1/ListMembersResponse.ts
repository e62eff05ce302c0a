// Original file: proto/timelane/v1/timelane.proto

import type { Member as _timelane_v1_Member, Member__Output as _timelane_v1_Member__Output } from '../../timelane/v1/Member.js';

export interface ListMembersResponse {
  'members'?: (_timelane_v1_Member)[];
}

export interface ListMembersResponse__Output {
  'members': (_timelane_v1_Member__Output)[];
}
