/** What the JSON API's handlers are given: this member's local view, the console's own state, and per request the caller's API session. */
import type { IncomingMessage } from 'node:http';
import type { TimelaneClient } from '@timelane/client';
import type { MetricsHistory } from './metrics-history.js';
import type { OperationLog } from './operations.js';
import type { QueueStatsReader } from './queue-stats.js';

/** What only the serving member knows (no RPC carries it). */
export interface LocalMemberView {
  memberId: string;
  /** Open worker streams per subscribed queue on this member ('*': every queue). */
  streamsPerQueue(): Record<string, number>;
}

export interface ApiContext {
  local: LocalMemberView;
  history: MetricsHistory;
  operations: OperationLog;
  now: () => number;
}

/** One request as the handlers see it. */
export interface ApiRequest {
  req: IncomingMessage;
  /** The caller's API client: it sends the caller's bearer token, if any. */
  client: TimelaneClient;
  /** The caller's queue statistics (cached per caller). */
  queues: QueueStatsReader;
  query: URLSearchParams;
  /** Path parameters of the route, in order. */
  params: string[];
  /** Parsed JSON body of a POST ({} when empty). */
  body: Record<string, unknown>;
  /** Keeps `client` open past the request (a background operation); call the result when done. */
  hold(): () => void;
}
