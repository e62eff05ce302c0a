/**
 * Public API of the timelane client library (`@timelane/client`). The
 * exactly-once helpers, which work on the application's own Postgres, are
 * the separate entry point `@timelane/client/exactly-once`, so that this one
 * names no type from `pg`.
 */
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
export { memberAddresses } from './discovery.js';
export { wallNowMs } from './clock.js';
export { tuneJitForLatency, LATENCY_INTERRUPT_BUDGET } from './jit.js';
export { loadTimelaneProto, timelaneV1, type LoadedTimelaneProto, type TimelaneV1 } from './proto.js';
export { runContext, parseTraceparent, formatTraceparent } from './tracing.js';
export type * from './types.js';
export type * from './workflow-types.js';
