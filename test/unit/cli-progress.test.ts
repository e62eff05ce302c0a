import { describe, expect, it } from 'vitest';
import { progress, type ProgressStream } from '../../clients/cli/cli-progress.js';

function sink(isTTY: boolean): ProgressStream & { text: string } {
  const s = {
    isTTY,
    text: '',
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
    // cli-progress asks a terminal stream for its width and moves the cursor.
    columns: 120,
    cursorTo() {
      return true;
    },
    clearLine() {
      return true;
    },
    moveCursor() {
      return true;
    },
    on() {
      return s;
    },
    removeListener() {
      return s;
    },
  };
  return s;
}

describe('CLI progress', () => {
  it('not a terminal: plain lines, the first and the finished one at once, the ones between throttled', () => {
    const out = sink(false);
    const p = progress('drain b', { stream: out });
    p.update(0, 4, 'moves landed');
    p.update(1, 4, 'moves landed');
    p.update(2, 4, 'moves landed');
    p.update(4, 4, 'moves landed');
    p.update(4, 4, 'moves landed');
    p.stop();
    p.update(3, 4);
    expect(out.text.split('\n').filter(Boolean)).toEqual(['drain b: 0/4 moves landed', 'drain b: 4/4 moves landed']);
  });

  it('the last count held back by the throttle is printed on stop', () => {
    const out = sink(false);
    const p = progress('replay', { stream: out });
    p.update(0, 10);
    p.update(5, 10);
    p.stop();
    expect(out.text).toBe('replay: 0/10\nreplay: 5/10\n');
  });

  it('a terminal: a bar with the count, redrawn in place', () => {
    const out = sink(true);
    const p = progress('rebalance', { stream: out });
    p.update(0, 3, 'moves landed');
    p.update(3, 3, 'moves landed');
    p.stop();
    expect(out.text).toContain('rebalance [');
    expect(out.text).toContain('3/3 moves landed');
    expect(out.text).not.toContain('rebalance: ');
  });

  it('quiet (--json): nothing at all', () => {
    const out = sink(true);
    const p = progress('drain b', { stream: out, quiet: true });
    p.update(1, 2);
    p.stop();
    // quiet ignores the stream entirely
    expect(out.text).toBe('');
  });
});
