/**
 * A stand-in OpenTelemetry collector for tests: an HTTP server that takes
 * OTLP/HTTP JSON trace exports (POST /v1/traces, what
 * @opentelemetry/exporter-trace-otlp-http sends) and keeps every span.
 * Tracked: `close()` stops it and untracks it.
 */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { track, untrack } from './tracked.js';

/** OTLP span kinds (opentelemetry/proto/trace/v1/trace.proto). */
export const OTLP_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

/** One exported span, flattened. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The exporting process's service.instance.id. */
  instance: string;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: AnyValue }[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

export interface OtlpCollector {
  /** The traces URL to export to (…/v1/traces). */
  url: string;
  spans: CollectedSpan[];
  /** Requests that were not OTLP JSON trace exports. */
  rejected: string[];
  close(): Promise<void>;
}

const valueOf = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? '';

const attributesOf = (list: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const rejected: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json'))
          throw new Error(`${req.method} ${req.url} ${req.headers['content-type']}`);
        const raw = Buffer.concat(chunks);
        const body = JSON.parse((req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')) as ExportRequest;
        for (const rs of body.resourceSpans ?? []) {
          const instance = String(attributesOf(rs.resource?.attributes)['service.instance.id'] ?? '');
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId ?? '',
                name: s.name,
                kind: s.kind,
                attributes: attributesOf(s.attributes),
                statusCode: s.status?.code ?? 0,
                instance,
              });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (err) {
        rejected.push(String(err));
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const collector: OtlpCollector = {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    rejected,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      untrack(collector);
    },
  };
  return track(collector, `OTLP collector :${port}`);
}
