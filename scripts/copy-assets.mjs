// After `tsc`: marks the CLI executable. (Protos and migrations are read from
// the package root at run time, so nothing is copied into dist/.)
import { chmodSync, existsSync } from 'node:fs';
const cli = new URL('../dist/clients/cli.js', import.meta.url);
if (existsSync(cli)) chmodSync(cli, 0o755);
