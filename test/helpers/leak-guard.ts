import { afterAll } from 'vitest';
import { liveResources } from './tracked.js';

// Fails a test file that leaves a daemon, worker or connection running
// (graphile-worker's afterEach guard, per file here).
afterAll(() => {
  const live = liveResources();
  if (live.length > 0) throw new Error(`test file leaked running resources: ${live.join(', ')}`);
});
