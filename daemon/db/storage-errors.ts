import { TimelaneError, unavailable } from '../errors.js';

/**
 * SQLSTATEs that mean "try again": the database is not reachable right now,
 * a deadlock (40P01) or serialization failure (40001) rolled the statement
 * back, or it was cancelled (57014: an engine pool's statement_timeout).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300', '40P01', '40001', '57014']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/** lock_not_available: a statement waited past its pool's lock_timeout for a row another transaction holds. */
const LOCK_TIMEOUT_STATE = '55P03';

/** A statement gave up waiting for a lock (`err`, or the error it was mapped from): trying it again at once would wait again. */
export function isLockTimeout(err: unknown): boolean {
  const is = (e: unknown): boolean => (e as { code?: string } | null)?.code === LOCK_TIMEOUT_STATE;
  return is(err) || is((err as { cause?: unknown } | null)?.cause);
}

/** The one mapper from storage errors to domain errors. */
export function mapStorageError(err: unknown): Error {
  if (err instanceof TimelaneError) return err;
  const e = err as { code?: string; message?: string };
  const msg = e?.message ?? String(err);
  if (e?.code === LOCK_TIMEOUT_STATE) return unavailable(`a lock it needs is held by another transaction (${msg}); send it again`, err);
  if (
    (e?.code && (UNAVAILABLE_STATES.has(e.code) || NETWORK_CODES.has(e.code))) ||
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Query read timeout/i.test(msg)
  ) {
    return unavailable(`database unavailable: ${msg}`, err);
  }
  return err instanceof Error ? err : new Error(msg);
}
