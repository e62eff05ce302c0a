/**
 * Preloaded into the daemon by `npm run bench -- --memory`
 * (NODE_OPTIONS=--expose-gc --import …): SIGUSR2 runs a full garbage
 * collection, so the bench reads RSS and V8 heap with the loader's spent
 * pages gone and what is left is what the window really holds.
 */
const collect = globalThis.gc;
if (collect) {
  process.on('SIGUSR2', () => {
    // Twice: the first pass may only queue finalizers whose memory the second frees.
    collect();
    collect();
  });
}
