/**
 * The one mapper from domain errors to gRPC status codes. Anything that is
 * not a TimelaneError is logged and answered INTERNAL with a generic message.
 */
import { status as Status, type ServiceError, Metadata } from '@grpc/grpc-js';
import { TimelaneError, type ErrorKind } from '../errors.js';
import type { Logger } from '../log.js';

export const CODE_OF: Record<ErrorKind, Status> = {
  invalid_argument: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  failed_precondition: Status.FAILED_PRECONDITION,
  already_exists: Status.ALREADY_EXISTS,
  unavailable: Status.UNAVAILABLE,
  resource_exhausted: Status.RESOURCE_EXHAUSTED,
  permission_denied: Status.PERMISSION_DENIED,
  unauthenticated: Status.UNAUTHENTICATED,
  internal: Status.INTERNAL,
};

export interface StatusAnswer {
  code: Status;
  details: string;
}

export function toStatus(err: unknown, log: Logger): StatusAnswer {
  if (err instanceof TimelaneError) return { code: CODE_OF[err.kind], details: err.message };
  log.error({ err }, 'internal error');
  return { code: Status.INTERNAL, details: 'internal error (see daemon log)' };
}

export function toServiceError(err: unknown, log: Logger): Partial<ServiceError> {
  const s = toStatus(err, log);
  return { code: s.code, details: s.details, message: s.details, metadata: new Metadata() };
}
