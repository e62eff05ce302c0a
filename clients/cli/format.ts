/** Text and JSON rendering for the CLI. Pure functions. */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { formatDuration } from '@timelane/client';
import type { JobInfo, RunInfo } from '@timelane/client';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A payload as text: UTF-8 when it decodes cleanly, else "base64:…". */
export function payloadText(payload: Buffer): string {
  try {
    return utf8.decode(payload);
  } catch {
    return `base64:${payload.toString('base64')}`;
  }
}

export function clip(text: string, max = 60): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Epoch ms as ISO-8601 (UTC); "-" for 0 (unset). */
export function iso(ms: number): string {
  return ms ? new Date(ms).toISOString() : '-';
}

/** "2030-…Z (in 2s)" / "(1.5s ago)". */
export function isoRelative(ms: number, now = Date.now()): string {
  if (!ms) return '-';
  const delta = ms - now;
  return `${iso(ms)} (${delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`})`;
}

/** JSON with Buffers as payloadText. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const original = this[key];
    return Buffer.isBuffer(original) ? payloadText(original) : v;
  });
}

/** Left-aligned columns separated by two spaces. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** "key  value" lines. */
export function keyValues(pairs: [string, string | number | boolean][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

export function jobLines(job: JobInfo): string {
  return keyValues([
    ['job', job.id],
    ['status', job.status],
    ['namespace', job.namespace],
    ['queue', job.queue],
    ['shard', job.shard],
    ['priority', job.priority],
    ['delivery', job.delivery],
    ['retry', `max ${job.retry.maxAttempts} attempts, backoff ${job.retry.initialBackoffMs}..${job.retry.maxBackoffMs} ms`],
    ['lease', `${job.leaseMs} ms`],
    ['dedupe key', job.dedupeKey || '-'],
    ['payload', clip(payloadText(job.payload), 200)],
    ['created', iso(job.createdAtMs)],
    ['updated', iso(job.updatedAtMs)],
  ]);
}

export function runLines(run: RunInfo): string {
  return keyValues([
    ['run', run.id],
    ['job', run.jobId],
    ['status', run.status],
    ['queue', run.queue],
    ['shard', run.shard],
    ['attempt', run.attempt],
    ['due', iso(run.dueAtMs)],
    ['fired', iso(run.firedAtMs)],
    ['lag', run.firedAtMs ? `${run.lagMs.toFixed(1)} ms` : '-'],
    ['fence', run.fence],
    ['deliveries', run.deliveries],
    ['lease expires', iso(run.leaseExpiresAtMs)],
    ['finished', iso(run.finishedAtMs)],
    ['idempotency key', run.idempotencyKey || '-'],
    ['error', run.error || '-'],
  ]);
}

export function runsTable(runs: RunInfo[]): string {
  return table(
    ['RUN', 'JOB', 'QUEUE', 'ATTEMPT', 'STATUS', 'DUE', 'FIRED', 'LAG', 'DELIVERIES', 'ERROR'],
    runs.map((r) => [
      r.id,
      r.jobId,
      r.queue,
      String(r.attempt),
      r.status,
      iso(r.dueAtMs),
      iso(r.firedAtMs),
      r.firedAtMs ? `${r.lagMs.toFixed(1)}ms` : '-',
      String(r.deliveries),
      clip(r.error, 40),
    ]),
  );
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number' && 'details' in err;
}

/** "error: NOT_FOUND: job … not found" for gRPC errors, "error: <message>" otherwise. */
export function errorLine(err: unknown): string {
  if (isServiceError(err)) return `error: ${GrpcStatus[err.code] ?? err.code}: ${err.details}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}
