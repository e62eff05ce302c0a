/**
 * The one mapper from failures to HTTP answers. The console's JSON API calls
 * the daemon's gRPC API through the TypeScript client, so its failures are
 * grpc-js ServiceErrors (mapped by code), the client's own input checks
 * (TypeError / RangeError: the caller's fault, 400), or a BadRequest raised
 * by our parameter checks (400, naming the parameter).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';

/** A request the console refuses before calling the API; `param` names the query parameter or body field. */
export class BadRequest extends Error {
  constructor(
    readonly param: string,
    rule: string,
  ) {
    super(`${param}: ${rule}`);
  }
}

export class NotFound extends Error {}

/** No credential where the daemon requires one, or a malformed Authorization header. */
export class Unauthenticated extends Error {}

/** gRPC status → HTTP status. Anything unlisted is the upstream's failure: 502. */
const HTTP_OF_GRPC: Partial<Record<GrpcStatus, number>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNAUTHENTICATED]: 401,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.FAILED_PRECONDITION]: 409,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.CANCELLED]: 503,
};

export interface ErrorAnswer {
  status: number;
  body: { error: string; param?: string; grpcCode?: string };
}

interface GrpcLikeError {
  code: number;
  details: string;
}

function isGrpcError(err: unknown): err is GrpcLikeError {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' && typeof (err as { details?: unknown }).details === 'string';
}

export function errorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof BadRequest) return { status: 400, body: { error: err.message, param: err.param } };
  if (err instanceof NotFound) return { status: 404, body: { error: err.message } };
  if (err instanceof Unauthenticated) return { status: 401, body: { error: err.message, grpcCode: 'UNAUTHENTICATED' } };
  if (err instanceof TypeError || err instanceof RangeError) return { status: 400, body: { error: err.message } };
  if (isGrpcError(err)) {
    const code = err.code as GrpcStatus;
    return { status: HTTP_OF_GRPC[code] ?? 502, body: { error: err.details || GrpcStatus[code], grpcCode: GrpcStatus[code] } };
  }
  return { status: 500, body: { error: 'internal error (see the daemon log)' } };
}
