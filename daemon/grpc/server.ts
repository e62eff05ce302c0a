/**
 * The gRPC server: Scheduler, Worker, Admin, Workflows, the standard grpc.health.v1
 * service and server reflection (so grpcurl works without the protos).
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { loadTimelaneProto } from '../../clients/proto.js';
import type { ApiContext } from './context.js';
import { schedulerHandlers } from './scheduler-service.js';
import { workerHandlers } from './worker-service.js';
import { adminHandlers } from './admin-service.js';
import { workflowsHandlers } from './workflows-service.js';

export interface GrpcServer {
  server: Server;
  health: HealthImplementation;
  port: number;
  setServing(serving: boolean): void;
  stop(graceMs: number): Promise<void>;
}

/** Readiness: NOT_SERVING until the daemon owns its assigned shards (or tried for a lease TTL), and while it stops. */
const SERVICES = ['', 'timelane.v1.Scheduler', 'timelane.v1.Worker', 'timelane.v1.Admin', 'timelane.v1.Workflows'];
/** Liveness: SERVING whenever the process answers at all (a restart cures nothing else). */
export const LIVENESS_SERVICE = 'timelane.liveness';

export async function startGrpcServer(ctx: ApiContext, address: string): Promise<GrpcServer> {
  const { pkg, packageDefinition } = loadTimelaneProto();
  const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  server.addService(pkg.Scheduler.service, schedulerHandlers(ctx));
  server.addService(pkg.Worker.service, workerHandlers(ctx));
  server.addService(pkg.Admin.service, adminHandlers(ctx));
  server.addService(pkg.Workflows.service, workflowsHandlers(ctx));
  const health = new HealthImplementation({
    ...Object.fromEntries(SERVICES.map((s) => [s, 'NOT_SERVING' as const])),
    [LIVENESS_SERVICE]: 'SERVING',
  });
  health.addToServer(server);
  new ReflectionService(packageDefinition).addToServer(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    server,
    health,
    port,
    setServing(serving) {
      for (const s of SERVICES) health.setStatus(s, serving ? 'SERVING' : 'NOT_SERVING');
    },
    async stop(graceMs) {
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
