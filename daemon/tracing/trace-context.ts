/**
 * A run's trace context as timelane carries it: the text of the W3C Trace
 * Context headers `traceparent` and `tracestate`
 * (https://www.w3.org/TR/trace-context/). A Schedule call brings it in its
 * gRPC metadata, the run row keeps it (migrations/0009), the claim reads it
 * back and DeliveredRun hands it to the worker.
 *
 * No OpenTelemetry code here: a daemon that exports no traces still carries
 * its clients' context to their workers, for the price of checking two
 * strings per Schedule call. A malformed value is dropped, never refused: a
 * schedule never fails for its tracing.
 */
import type { Metadata } from '@grpc/grpc-js';

export interface TraceContext {
  /** "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>". */
  traceparent: string;
  /** Vendor entries ("k1=v1,k2=v2"), null when there are none. */
  tracestate: string | null;
}

export const TRACEPARENT_KEY = 'traceparent';
export const TRACESTATE_KEY = 'tracestate';

/**
 * Longest tracestate kept, in characters: W3C asks to propagate at least 512
 * (32 entries). Past it, whole entries are dropped from the end.
 */
export const MAX_TRACESTATE_CHARS = 512;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * A traceparent in its version-00 form, or null if it is not a valid one:
 * version `ff` and all-zero ids are invalid; version 00 has exactly four
 * fields; a later version may append fields (dropped here, as the spec asks
 * of a version-00 implementation).
 */
export function normaliseTraceparent(text: string): string | null {
  const m = TRACEPARENT.exec(text);
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff' || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  if (version === '00') return rest === undefined ? text : null;
  return `00-${traceId}-${spanId}-${flags}`;
}

/** Joins tracestate values (a header may repeat), keeping whole entries within MAX_TRACESTATE_CHARS. */
export function boundedTracestate(values: readonly string[]): string | null {
  let out = '';
  for (const value of values)
    for (const raw of value.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const next = out === '' ? entry : `${out},${entry}`;
      if (next.length > MAX_TRACESTATE_CHARS) return out || null;
      out = next;
    }
  return out || null;
}

/** The trace context a call's metadata carries, or null (none, or not valid). */
export function traceContextOf(metadata: Metadata): TraceContext | null {
  const [parent] = metadata.get(TRACEPARENT_KEY);
  if (typeof parent !== 'string') return null;
  const traceparent = normaliseTraceparent(parent.trim());
  if (traceparent === null) return null;
  const states = metadata.get(TRACESTATE_KEY).filter((v): v is string => typeof v === 'string');
  return { traceparent, tracestate: states.length > 0 ? boundedTracestate(states) : null };
}

/** The traceparent text of a span context's fields. */
export function formatTraceparent(traceId: string, spanId: string, traceFlags: number): string {
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
