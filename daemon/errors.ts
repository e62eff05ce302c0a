/**
 * Domain errors. Storage errors are mapped to these in one place
 * (`db/storage-errors.ts`), and these are mapped to gRPC status codes in one
 * place (`grpc/status.ts`). Messages name the field and the rule broken.
 */
export type ErrorKind =
  | 'invalid_argument'
  | 'not_found'
  | 'failed_precondition'
  | 'already_exists'
  | 'unavailable'
  | 'resource_exhausted'
  | 'permission_denied'
  | 'unauthenticated'
  | 'internal';

export class TimelaneError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TimelaneError';
  }
}

export const invalidArgument = (field: string, rule: string): TimelaneError =>
  new TimelaneError('invalid_argument', `${field}: ${rule}`);
export const notFound = (what: string): TimelaneError => new TimelaneError('not_found', `${what} not found`);
export const failedPrecondition = (message: string): TimelaneError => new TimelaneError('failed_precondition', message);
export const permissionDenied = (message: string): TimelaneError => new TimelaneError('permission_denied', message);
export const unauthenticated = (message: string): TimelaneError => new TimelaneError('unauthenticated', message);
export const resourceExhausted = (message: string): TimelaneError => new TimelaneError('resource_exhausted', message);
export const unavailable = (message: string, cause?: unknown): TimelaneError =>
  new TimelaneError('unavailable', message, { cause });

/** The daemon no longer holds the shard (stale fence). Stop the shard, fire nothing. */
export class OwnershipLostError extends Error {
  constructor(readonly shard: number, readonly fence: number) {
    super(`shard ${shard}: fence ${fence} is stale`);
    this.name = 'OwnershipLostError';
  }
}
