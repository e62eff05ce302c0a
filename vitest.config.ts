import { defineConfig } from 'vitest/config';

export default defineConfig({
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
