// Rewrites the configuration table in README.md from daemon/config.ts (run after `npm run build`).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigTable } from '../dist/daemon/config-doc.js';
const path = new URL('../README.md', import.meta.url);
const readme = readFileSync(path, 'utf8');
const out = readme.replace(/<!-- config-table:start -->[\s\S]*<!-- config-table:end -->/, `<!-- config-table:start -->\n${renderConfigTable()}\n<!-- config-table:end -->`);
writeFileSync(path, out);
