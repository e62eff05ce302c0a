/**
 * Whether the daemon exports traces, and if so its RunTracing: the
 * OpenTelemetry SDK (otel-tracing.ts) is imported only then, so a daemon
 * that exports none never loads it.
 */
import type { Logger } from '../log.js';
import type { RunTracing } from './run-tracing.js';

export interface TracingOptions {
  /** --otlp-traces-endpoint (empty: unset). */
  otlpTracesEndpoint: string;
  memberId: string;
  log: Logger;
}

/**
 * Where traces go: the flag (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, its
 * environment variable), else `undefined` when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set (the exporter appends /v1/traces), else null: tracing is off. So is it
 * with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingEndpoint(otlpTracesEndpoint: string, env: NodeJS.ProcessEnv = process.env): string | undefined | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return null;
  if (otlpTracesEndpoint) return otlpTracesEndpoint;
  return env.OTEL_EXPORTER_OTLP_ENDPOINT ? undefined : null;
}

/** The daemon's tracing when configured (the SDK is loaded only then), else null. */
export async function startTracing(opts: TracingOptions, env: NodeJS.ProcessEnv = process.env): Promise<RunTracing | null> {
  const url = tracingEndpoint(opts.otlpTracesEndpoint, env);
  if (url === null) return null;
  const { createOtelTracing } = await import('./otel-tracing.js');
  return createOtelTracing({ url, memberId: opts.memberId, log: opts.log });
}
