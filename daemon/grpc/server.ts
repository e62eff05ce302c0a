/**
 * The gRPC server: Scheduler, Worker, Admin, Workflows, the standard grpc.health.v1
 * service and server reflection (so grpcurl works without the protos).
 */
import { Server, ServerCredentials, type ServerInterceptor } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { serverProto } from './proto.js';
import type { ApiContext } from './context.js';
import { schedulerHandlers } from './scheduler-service.js';
import { workerHandlers } from './worker-service.js';
import { adminHandlers } from './admin-service.js';
import { stampSendTime } from './send-stamp.js';
import { malformedInterceptor, tolerantService } from './malformed.js';
import { workflowsHandlers } from './workflows-service.js';

export interface GrpcServer {
  server: Server;
  health: HealthImplementation;
  port: number;
  /** The plaintext health-only listener's port (0: none). */
  healthPort: number;
  setServing(serving: boolean): void;
  stop(graceMs: number): Promise<void>;
}

/**
 * Limits of the gRPC port (README, "Limits"): a request or stream message of
 * at most 64 MiB (a ScheduleBatch of 1,000 payloads at the largest
 * --max-payload-bytes fits; clients send at most that); at most 1,000
 * concurrent calls per connection; idle connections are pinged and dropped
 * when the peer is gone.
 */
export const SERVER_LIMITS = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc.max_concurrent_streams': 1_000,
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
} as const;

/** Readiness: NOT_SERVING until the daemon owns its assigned shards (or tried for a lease TTL), and while it stops. */
const SERVICES = ['', 'timelane.v1.Scheduler', 'timelane.v1.Worker', 'timelane.v1.Admin', 'timelane.v1.Workflows'];
/** Liveness: SERVING whenever the process answers at all (a restart cures nothing else). */
export const LIVENESS_SERVICE = 'timelane.liveness';

export interface GrpcSecurity {
  credentials: ServerCredentials;
  /** Authentication and authorisation of every call (daemon/security/authorize.ts). */
  interceptor: ServerInterceptor;
}

/** Binds `address`; a failure names the flag that sets it, and what to do (a port in use is the common one). */
function bind(server: Server, address: string, credentials: ServerCredentials, flag: string): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(address, credentials, (err, p) => {
      if (!err) return resolve(p);
      const why = /EADDRINUSE/.test(err.message) ? 'the port is in use by another process' : err.message;
      reject(new Error(`${flag} ${address}: cannot listen (${why}); pick another with ${flag} host:port (port 0: any free port)`, { cause: err }));
    }),
  );
}

export async function startGrpcServer(ctx: ApiContext, address: string, security?: GrpcSecurity, healthAddress = ''): Promise<GrpcServer> {
  const { pkg, packageDefinition } = serverProto();
  const server = new Server({ ...SERVER_LIMITS, interceptors: [...(security ? [security.interceptor] : []), malformedInterceptor] });
  server.addService(tolerantService(pkg.Scheduler.service), schedulerHandlers(ctx));
  server.addService(stampSendTime(tolerantService(pkg.Worker.service)), workerHandlers(ctx));
  server.addService(tolerantService(pkg.Admin.service), adminHandlers(ctx));
  server.addService(tolerantService(pkg.Workflows.service), workflowsHandlers(ctx));
  const health = new HealthImplementation({
    ...Object.fromEntries(SERVICES.map((s) => [s, 'NOT_SERVING' as const])),
    [LIVENESS_SERVICE]: 'SERVING',
  });
  health.addToServer(server);
  new ReflectionService(packageDefinition).addToServer(server);
  const port = await bind(server, address, security?.credentials ?? ServerCredentials.createInsecure(), '--grpc-address');
  // Health only, plaintext, no credential: what a kubelet gRPC probe can reach.
  const healthServer = healthAddress ? new Server() : null;
  if (healthServer) health.addToServer(healthServer);
  const healthPort = healthServer ? await bind(healthServer, healthAddress, ServerCredentials.createInsecure(), '--health-address') : 0;
  return {
    server,
    health,
    port,
    healthPort,
    setServing(serving) {
      for (const s of SERVICES) health.setStatus(s, serving ? 'SERVING' : 'NOT_SERVING');
    },
    async stop(graceMs) {
      healthServer?.forceShutdown();
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      });
    },
  };
}
