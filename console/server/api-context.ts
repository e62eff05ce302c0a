/** What the JSON API's handlers are given: the API client, this member's local view, and the console's own state. */
import type { IncomingMessage } from 'node:http';
import type { TimelaneClient } from '../../clients/client.js';
import type { MetricsHistory } from './metrics-history.js';
import type { OperationLog } from './operations.js';
import type { QueueStatsReader } from './queue-stats.js';

/**
 * The client that makes a request's API calls. Today one shared client
 * (the daemon's own gRPC address); when authentication lands (issue 10) this
 * is the one place that builds a client carrying the caller's credentials.
 */
export type ClientFor = (req: IncomingMessage) => TimelaneClient;

/** What only the serving member knows (no RPC carries it). */
export interface LocalMemberView {
  memberId: string;
  /** Open worker streams per subscribed queue on this member ('*': every queue). */
  streamsPerQueue(): Record<string, number>;
}

export interface ApiContext {
  clientFor: ClientFor;
  local: LocalMemberView;
  history: MetricsHistory;
  queues: QueueStatsReader;
  operations: OperationLog;
  now: () => number;
}

/** One request as the handlers see it. */
export interface ApiRequest {
  req: IncomingMessage;
  client: TimelaneClient;
  query: URLSearchParams;
  /** Path parameters of the route, in order. */
  params: string[];
  /** Parsed JSON body of a POST ({} when empty). */
  body: Record<string, unknown>;
}
