/** Public API of the timelane client library. */
export { TimelaneClient, DEFAULT_ADDRESS, type TimelaneClientOptions } from './client.js';
export { tlsCredentials, bearerInterceptor, connectionFromEnv, type TlsOptions } from './credentials.js';
export {
  createWorker,
  NonRetryableError,
  CancelledError,
  type Worker,
  type WorkerOptions,
  type RunHandler,
  type WorkerContext,
  type WorkerStats,
} from './worker.js';
export { openWorkStream, WorkStream, type SubscribeOptions, type StreamEnd, type WorkStreamOptions, type SubscribedInfo } from './work-stream.js';
export { parseDuration, parseInstant, formatDuration } from './duration.js';
export { loadTimelaneProto, timelaneV1, type LoadedTimelaneProto, type TimelaneV1 } from './proto.js';
export { runContext, parseTraceparent, formatTraceparent } from './tracing.js';
export type * from './types.js';
export type * from './workflow-types.js';
export {
  exactlyOnce,
  applyOnce,
  ensureSchema,
  DEFAULT_EFFECTS_TABLE,
  type ExactlyOnceOptions,
  type ExactlyOnceHandlerOptions,
  type ExactlyOnceOutcome,
  type AppliedEffect,
  type Effect,
} from './exactly-once.js';
