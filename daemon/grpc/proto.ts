/**
 * Loads the timelane v1 proto for the daemon's gRPC server, once: the
 * service definitions it serves and the package definition that server
 * reflection describes. The client library (`@timelane/client`) has its own
 * loader: the daemon and the clients share nothing but proto/.
 *
 * The file is found by walking up from this module to the first
 * proto/timelane/v1/timelane.proto, so it works from the sources
 * (daemon/grpc/) and from the build (dist/daemon/grpc/).
 *
 * Loader options match how proto/gen was generated
 * (`--longs=String --enums=String --defaults --oneofs`), which is what the
 * handlers' types promise: int64 fields are decimal strings, enums are their
 * names, unset fields have their defaults (message fields are null) and each
 * oneof has a virtual field naming the member that is set.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../../proto/gen/timelane.js';

/** The `timelane.v1` package: message types and service definitions. */
export type TimelaneV1 = ProtoGrpcType['timelane']['v1'];

export interface ServerProto {
  pkg: TimelaneV1;
  packageDefinition: protoLoader.PackageDefinition;
}

const PROTO_RELATIVE_PATH = join('proto', 'timelane', 'v1', 'timelane.proto');

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

function findProtoPath(startDir: string): string {
  for (let dir = startDir; ; dir = dirname(dir)) {
    const candidate = join(dir, PROTO_RELATIVE_PATH);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error(`timelane: cannot find ${PROTO_RELATIVE_PATH} in ${startDir} or any parent directory`);
  }
}

let loaded: ServerProto | undefined;

/** Loads (once) the typed package and its definition. */
export function serverProto(): ServerProto {
  if (loaded) return loaded;
  const packageDefinition = protoLoader.loadSync(findProtoPath(dirname(fileURLToPath(import.meta.url))), LOADER_OPTIONS);
  const root = grpc.loadPackageDefinition(packageDefinition) as unknown as ProtoGrpcType;
  loaded = { pkg: root.timelane.v1, packageDefinition };
  return loaded;
}
