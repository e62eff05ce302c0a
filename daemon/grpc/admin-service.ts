/** Admin RPCs: the shard map and the member list. */
import type { AdminHandlers } from '../../proto/gen/timelane/v1/Admin.js';
import type { ApiContext } from './context.js';
import { toServiceError } from './status.js';

export function adminHandlers(ctx: ApiContext): AdminHandlers {
  return {
    ListShards: (_call, cb) => {
      ctx.listShards().then(
        (shards) => cb(null, { shards }),
        (err: unknown) => cb(toServiceError(err, ctx.log)),
      );
    },
    ListMembers: (_call, cb) => {
      ctx.listMembers().then(
        (members) => cb(null, { members }),
        (err: unknown) => cb(toServiceError(err, ctx.log)),
      );
    },
  };
}
