import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const clientSource = (file: string): string => fileURLToPath(new URL(`clients/typescript/src/${file}`, import.meta.url));

export default defineConfig({
  // Tests run the client library from its sources, as tsconfig.json's paths
  // type it; processes the tests start (the built daemon and CLI) load the
  // built package from node_modules.
  resolve: {
    alias: [
      { find: /^@timelane\/client$/, replacement: clientSource('index.ts') },
      { find: /^@timelane\/client\/exactly-once$/, replacement: clientSource('exactly-once.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Integration and end-to-end files each own a database and a Redis prefix,
    // but the machine has two cores: keep parallelism modest.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/helpers/leak-guard.ts'],
  },
});
