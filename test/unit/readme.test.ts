import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as client from '@timelane/client';
import * as exactlyOnce from '@timelane/client/exactly-once';
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

  it('documents both installs: the server package and the client package alone', () => {
    expect(readme).toContain('npm install timelane');
    expect(readme).toContain('npm install @timelane/client');
  });

  it("imports, in its TypeScript examples, from timelane only what the client package's entry points export", () => {
    const exported: Record<string, object> = { '@timelane/client': client, '@timelane/client/exactly-once': exactlyOnce };
    const imports = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].flatMap(([, code]) => [...code.matchAll(/^import \{([^}]*)\} from '([^']+)';$/gm)]);
    expect(imports.length).toBeGreaterThan(3);
    for (const [line, names, from] of imports) {
      // Other packages' imports (node:, OpenTelemetry's) are theirs to check.
      if (from !== 'timelane' && !from.startsWith('@timelane/')) continue;
      expect(Object.keys(exported), line).toContain(from);
      for (const name of names.split(',').map((n) => n.trim()).filter((n) => n && !n.startsWith('type '))) {
        expect(exported[from], `${line}: ${name}`).toHaveProperty(name);
      }
    }
  });
});
