import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigTable } from '../../daemon/config-doc.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('documents every daemon setting exactly as the code defines it (npm run docs:config)', () => {
    const block = /<!-- config-table:start -->\n([\s\S]*)\n<!-- config-table:end -->/.exec(readme)?.[1];
    expect(block).toBe(renderConfigTable());
  });

  it('names the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
