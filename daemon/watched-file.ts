/**
 * A settings file the daemon re-reads while it runs (credentials, quotas):
 * parsed at start (an error stops the start), then polled; a change that
 * parses replaces the value, one that does not is logged and the previous
 * value stays in force — a typo while editing must not lock everyone out.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Logger } from './log.js';

export class WatchedFile<T> {
  private value: T;

  constructor(
    private readonly path: string,
    private readonly parse: (text: string, source: string) => T,
    private readonly what: string,
    private readonly log: Logger,
    private readonly pollMs: number,
  ) {
    this.value = parse(readFileSync(path, 'utf8'), path);
  }

  get current(): T {
    return this.value;
  }

  start(): void {
    watchFile(this.path, { interval: this.pollMs, persistent: false }, (cur, prev) => {
      if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size) return;
      try {
        this.value = this.parse(readFileSync(this.path, 'utf8'), this.path);
        this.log.info({ file: this.path }, `${this.what} reloaded`);
      } catch (err) {
        this.log.error({ err: (err as Error).message }, `${this.what} file not reloaded; the previous one stays in force`);
      }
    });
  }

  stop(): void {
    unwatchFile(this.path);
  }
}

/** JSON.parse with the file named in the error. */
export function parseJsonFile(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${source}: not JSON (${(err as Error).message})`);
  }
}
