// After `tsc`: marks the CLI executable and copies the web console's front
// end into dist/console/web, with its vendored libraries (from node_modules,
// pinned in package.json) in dist/console/web/vendor — served by the daemon,
// so the console works offline and loads nothing from a CDN. (Protos and
// migrations are read from the package root at run time.)
import { chmodSync, cpSync, existsSync, mkdirSync } from 'node:fs';
const root = new URL('../', import.meta.url);
const cli = new URL('dist/clients/cli/cli.js', root);
if (existsSync(cli)) chmodSync(cli, 0o755);

const web = new URL('dist/console/web/', root);
cpSync(new URL('console/web/', root), web, { recursive: true });
const VENDORED = {
  // Preact + hooks + htm in one ES module: components without a bundler or a JSX build step.
  'htm-preact.mjs': 'node_modules/htm/preact/standalone.module.js',
  'uPlot.esm.js': 'node_modules/uplot/dist/uPlot.esm.js',
  'uPlot.min.css': 'node_modules/uplot/dist/uPlot.min.css',
};
mkdirSync(new URL('vendor/', web), { recursive: true });
for (const [name, from] of Object.entries(VENDORED)) cpSync(new URL(from, root), new URL(`vendor/${name}`, web));
