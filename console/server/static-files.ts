/**
 * Serves the console's front end: the files under one directory (the built
 * dist/console/web, vendored libraries in its vendor/), never a path outside
 * it. Files are read once and kept in memory: the whole front end is a few
 * hundred kilobytes and never changes while the daemon runs.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

export interface StaticFile {
  body: Buffer;
  contentType: string;
}

export class StaticFiles {
  private readonly cache = new Map<string, Promise<StaticFile | null>>();

  constructor(private readonly root: string) {}

  /** The file for a URL path ('/' is index.html); null when absent or outside the root. */
  get(urlPath: string): Promise<StaticFile | null> {
    let rel: string;
    try {
      rel = urlPath === '/' ? 'index.html' : decodeURIComponent(urlPath).replace(/^\/+/, '');
    } catch {
      return Promise.resolve(null); // a malformed %-escape names no file (was a 500 and a stack trace in the log)
    }
    const full = path.resolve(this.root, rel);
    if (!full.startsWith(this.root + path.sep)) return Promise.resolve(null);
    let hit = this.cache.get(full);
    if (!hit) {
      hit = readFile(full).then(
        (body) => ({ body, contentType: TYPES[path.extname(full)] ?? 'application/octet-stream' }),
        () => {
          this.cache.delete(full); // only files that exist are kept: random paths must not grow the cache
          return null;
        },
      );
      this.cache.set(full, hit);
    }
    return hit;
  }
}
