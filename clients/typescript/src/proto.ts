/**
 * Loads the timelane v1 proto at run time, once, for the client and the
 * worker. The file is found by walking up from this module: the package
 * ships it in its proto/ (scripts/sync-proto.mjs copies it there), so it
 * works from the build (dist/src/) as from the sources (src/); in a
 * repository checkout without that copy the walk ends at the shared proto/.
 * (The daemon has its own loader, daemon/grpc/proto.ts.)
 *
 * Loader options match how proto/gen was generated
 * (`--longs=String --enums=String --defaults --oneofs`): int64 fields are
 * decimal strings, enums are their names, unset fields have their defaults
 * (message fields are null) and each oneof has a virtual field naming the
 * member that is set.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../proto/gen/timelane.js';

/** The `timelane.v1` package: message types and service constructors. */
export type TimelaneV1 = ProtoGrpcType['timelane']['v1'];

export interface LoadedTimelaneProto {
  pkg: TimelaneV1;
  packageDefinition: protoLoader.PackageDefinition;
  protoPath: string;
}

export const PROTO_RELATIVE_PATH = join('proto', 'timelane', 'v1', 'timelane.proto');

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Walks up from `startDir` to the first directory holding proto/timelane/v1/timelane.proto. */
export function findProtoPath(startDir: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = startDir;
  for (;;) {
    const candidate = join(dir, PROTO_RELATIVE_PATH);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(`timelane: cannot find ${PROTO_RELATIVE_PATH} in ${startDir} or any parent directory`);
    }
    dir = parent;
  }
}

let loaded: LoadedTimelaneProto | undefined;

/** Loads (once) and returns the typed package, its definition and the proto's path. */
export function loadTimelaneProto(): LoadedTimelaneProto {
  if (loaded) return loaded;
  const protoPath = findProtoPath();
  const packageDefinition = protoLoader.loadSync(protoPath, LOADER_OPTIONS);
  const root = grpc.loadPackageDefinition(packageDefinition) as unknown as ProtoGrpcType;
  loaded = { pkg: root.timelane.v1, packageDefinition, protoPath };
  return loaded;
}

/** Shorthand for `loadTimelaneProto().pkg`. */
export function timelaneV1(): TimelaneV1 {
  return loadTimelaneProto().pkg;
}
