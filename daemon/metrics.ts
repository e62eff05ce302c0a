/**
 * Prometheus metrics (prom-client), one registry per daemon so tests can run
 * several in one process. Served on --metrics-address at /metrics.
 */
import https from 'node:https';
import { readTlsFiles, watchHttpsContext, type TlsFiles } from './security/tls.js';
import type { Logger } from './log.js';
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LOST_REASONS } from './coord/shard-leases.js';

const LAG_BUCKETS_MS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30_000];

export class Metrics {
  readonly registry = new Registry();
  readonly fireLag = new Histogram({
    name: 'timelane_fire_lag_ms',
    help: 'Claimed run released to delivery minus its due time, in ms (0 for a run staged at a worker ahead of its due time)',
    buckets: LAG_BUCKETS_MS,
    registers: [this.registry],
  });
  readonly timerLag = new Histogram({
    name: 'timelane_timer_lag_ms',
    help: 'How late the fast-lane timer fired: timer fire minus its planned moment (due time less half the claim-ahead), 0 when on time, in ms',
    buckets: LAG_BUCKETS_MS,
    registers: [this.registry],
  });
  readonly fired = new Counter({ name: 'timelane_runs_fired_total', help: 'Runs claimed and fired', registers: [this.registry] });
  readonly staged = new Counter({ name: 'timelane_runs_staged_total', help: 'Deliveries handed to a worker ahead of their due time, for it to start them at due (staging; a run redelivered before it is due counts again)', registers: [this.registry] });
  readonly completed = new Counter({ name: 'timelane_runs_completed_total', help: 'Runs completed by workers', registers: [this.registry] });
  readonly failed = new Counter({ name: 'timelane_runs_failed_total', help: 'Runs failed (retried or dead): by their worker, or an at-most-once workflow step never answered', labelNames: ['outcome'], registers: [this.registry] });
  readonly redelivered = new Counter({ name: 'timelane_runs_redelivered_total', help: 'Runs handed out again after their delivery lease expired', registers: [this.registry] });
  readonly scheduled = new Counter({ name: 'timelane_runs_scheduled_total', help: 'Runs scheduled through this daemon', registers: [this.registry] });
  readonly rejectedAnswers = new Counter({ name: 'timelane_answers_rejected_total', help: 'Worker answers refused: for a superseded delivery (FAILED_PRECONDITION) or a run the worker may not answer or that does not exist (NOT_FOUND)', registers: [this.registry] });
  readonly occurrences = new Counter({
    name: 'timelane_occurrences_total',
    help: 'Occurrences of recurring jobs by outcome: scheduled (made a run), missed (outside the catch-up window), skipped / buffered (overlap policy)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly claimMisses = new Counter({ name: 'timelane_claim_misses_total', help: 'Runs popped from the heap that the fenced claim did not return', registers: [this.registry] });
  readonly runsInWindow = new Gauge({ name: 'timelane_runs_in_window', help: 'Runs held in the fast lane', registers: [this.registry] });
  readonly ownedShards = new Gauge({ name: 'timelane_owned_shards', help: 'Shards this daemon holds a lease on', registers: [this.registry] });
  readonly clockSkew = new Gauge({ name: 'timelane_clock_skew_ms', help: 'Postgres clock minus local wall clock, in ms', registers: [this.registry] });
  readonly clockSteps = new Counter({ name: 'timelane_clock_steps_total', help: 'Wall-clock steps detected (heap re-based)', registers: [this.registry] });
  readonly shardsLost = new Counter({ name: 'timelane_shards_lost_total', help: 'Shards dropped (lease lost or stale fence)', labelNames: ['reason'], registers: [this.registry] });
  readonly workers = new Gauge({ name: 'timelane_worker_streams', help: 'Open worker streams', registers: [this.registry] });
  readonly readyBacklog = new Gauge({ name: 'timelane_ready_backlog', help: 'Fired runs waiting for worker credit', registers: [this.registry] });
  readonly heldBack = new Gauge({ name: 'timelane_runs_held_back', help: "Due runs left scheduled because their queue's room in delivery is full (a backed-up queue)", registers: [this.registry] });
  readonly shardCount = new Gauge({ name: 'timelane_shard_count', help: "The cluster's shard count (every daemon reports it: alerts compare owned shards with it)", registers: [this.registry] });
  readonly postgresUp = new Gauge({ name: 'timelane_postgres_up', help: '1 when the last Postgres probe (every 5 s) answered, else 0', registers: [this.registry] });
  /** Registered only by a daemon with Redis (watchRedis): unset, an unlabelled gauge exports 0, which pages "Redis down" on every daemon without one. */
  readonly redisUp = new Gauge({ name: 'timelane_redis_up', help: '1 when the Redis connection is ready, else 0 (cluster mode only)', registers: [] });

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    // Every known label value starts at 0: a series that first appears at its final value (one dead run, four
    // shards lost at once) has no increase() in Prometheus, and its alert would miss the event.
    for (const outcome of ['retry', 'dead', 'cancelled']) this.failed.inc({ outcome }, 0);
    for (const outcome of ['scheduled', 'missed', 'skipped', 'buffered']) this.occurrences.inc({ outcome }, 0);
    for (const reason of LOST_REASONS) this.shardsLost.inc({ reason }, 0);
  }

  /** A daemon with Redis exports timelane_redis_up. */
  watchRedis(): void {
    if (!this.registry.getSingleMetric('timelane_redis_up')) this.registry.registerMetric(this.redisUp);
  }
}

/** Serves /metrics (over HTTPS with `tls`, its certificate re-read as it changes). */
export async function serveMetrics(metrics: Metrics, address: string, tls: TlsFiles | null = null, log?: Logger): Promise<http.Server> {
  const idx = address.lastIndexOf(':');
  const host = address.slice(0, idx);
  const port = Number(address.slice(idx + 1));
  const handler: http.RequestListener = (req, res) => {
    // The path alone: scrapers may add a query string (Prometheus's `params`), which this endpoint ignores.
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end('see /metrics\n');
      return;
    }
    metrics.registry
      .metrics()
      .then((body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body))
      .catch((err: unknown) => res.writeHead(500).end(String(err)));
  };
  let server: http.Server;
  if (tls) {
    const secure = https.createServer(readTlsFiles(tls), handler);
    if (log) {
      const stopWatching = watchHttpsContext(secure, tls, log, 'metrics');
      secure.once('close', stopWatching);
    }
    server = secure;
  } else server = http.createServer(handler);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 'the port is in use by another process' : (err as Error).message;
    throw new Error(`--metrics-address ${address}: cannot listen (${why}); pick another with --metrics-address host:port, or "" to turn metrics off`, { cause: err });
  }
  return server;
}
