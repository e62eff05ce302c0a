/**
 * Preloaded into the daemon (NODE_OPTIONS=--import …) by `--daemon-cpu-prof`:
 * Node refuses --cpu-prof in NODE_OPTIONS, so this starts the V8 profiler
 * through node:inspector and writes `daemon-<pid>.cpuprofile` into
 * $TIMELANE_BENCH_CPU_PROF_DIR when the process exits.
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.env.TIMELANE_BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // The in-process session answers synchronously, so this completes before exit.
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `daemon-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
