// Copies what the compiled daemon reads at run time (protos, migrations) is not needed:
// dist code resolves them from the package root. This only marks the CLI executable.
import { chmodSync, existsSync } from 'node:fs';
const cli = new URL('../dist/clients/cli.js', import.meta.url);
if (existsSync(cli)) chmodSync(cli, 0o755);
