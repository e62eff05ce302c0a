/**
 * Progress of a long CLI operation (drain, rebalance, backfill, bulk replay),
 * on stderr so stdout stays the command's result: a bar (cli-progress) when
 * stderr is a terminal, plain lines otherwise — one per change of the count,
 * at most one per LINE_EVERY_MS, and always the last.
 *
 * States: running (update) → stopped (stop; further updates are ignored).
 */
import cliProgress from 'cli-progress';

export interface Progress {
  /** `done` of `total` so far; `detail` is a short note (e.g. the moves still pending). */
  update(done: number, total: number, detail?: string): void;
  /** Prints the final state and releases the terminal line. */
  stop(): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Plain lines are printed at most this often (the last one always). */
const LINE_EVERY_MS = 500;

/** A progress reporter for `label` ("drain b", "replay"); silent when `quiet` (e.g. --json). */
export function progress(label: string, opts: { quiet?: boolean; stream?: ProgressStream } = {}): Progress {
  if (opts.quiet) return { update() {}, stop() {} };
  const stream = opts.stream ?? process.stderr;
  return stream.isTTY ? new BarProgress(label, stream) : new LineProgress(label, stream);
}

class LineProgress implements Progress {
  private last = '';
  private lastAt = 0;
  private pending = '';
  private stopped = false;

  constructor(private readonly label: string, private readonly stream: ProgressStream) {}

  update(done: number, total: number, detail = ''): void {
    if (this.stopped) return;
    const line = `${this.label}: ${done}/${total}${detail ? ` ${detail}` : ''}`;
    if (line === this.last) return;
    const now = Date.now();
    // The first line and a finished count go out at once; others at most every LINE_EVERY_MS.
    if (this.last !== '' && done < total && now - this.lastAt < LINE_EVERY_MS) {
      this.pending = line;
      return;
    }
    this.print(line, now);
  }

  stop(): void {
    if (this.stopped) return;
    if (this.pending && this.pending !== this.last) this.print(this.pending, Date.now());
    this.stopped = true;
  }

  private print(line: string, now: number): void {
    this.stream.write(`${line}\n`);
    this.last = line;
    this.lastAt = now;
    this.pending = '';
  }
}

class BarProgress implements Progress {
  private readonly bar: cliProgress.SingleBar;
  private started = false;
  private stopped = false;

  constructor(label: string, stream: ProgressStream) {
    this.bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {value}/{total} {detail}`,
        stream: stream as NodeJS.WritableStream,
        hideCursor: true,
        clearOnComplete: false,
        barsize: 30,
        // cli-progress draws only on a TTY unless told otherwise; the caller chose the bar for a TTY.
        noTTYOutput: true,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  update(done: number, total: number, detail = ''): void {
    if (this.stopped) return;
    if (!this.started) {
      this.bar.start(total, done, { detail });
      this.started = true;
      return;
    }
    this.bar.setTotal(total);
    this.bar.update(done, { detail });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.started) this.bar.stop();
  }
}
