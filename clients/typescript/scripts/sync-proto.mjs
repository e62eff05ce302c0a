// Copies the API from the repository's proto/ into this package's proto/:
// the .proto files (which the client loads at run time and `npm pack` ships)
// and the types generated from them (which the build compiles into
// dist/proto/gen, next to the .d.ts files that use them). This package's
// proto/ is a build artefact, git-ignored: edit ../../proto and run
// `npm run proto:gen` at the repository root.
// With --clean, also empties dist/ so a build ships no file whose source is gone.
import { cpSync, existsSync, rmSync } from 'node:fs';

const pkg = new URL('../', import.meta.url);
const shared = new URL('../../../proto/', import.meta.url);
if (!existsSync(new URL('timelane/v1/timelane.proto', shared))) {
  throw new Error(`@timelane/client: ${shared.pathname} not found; build this package from the timelane repository`);
}
const target = new URL('proto/', pkg);
rmSync(target, { recursive: true, force: true });
cpSync(new URL('timelane/', shared), new URL('timelane/', target), { recursive: true });
cpSync(new URL('gen/', shared), new URL('gen/', target), { recursive: true });
if (process.argv.includes('--clean')) rmSync(new URL('dist/', pkg), { recursive: true, force: true });
