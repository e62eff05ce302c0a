import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/**
 * Structured logs on stdout: JSON lines (production), or human-readable
 * lines for a person at a terminal (`timelane dev`). `TIMELANE_LOG_LEVEL`
 * (or --log-level) picks the level.
 */
export function createLogger(
  level: string = process.env.TIMELANE_LOG_LEVEL ?? 'info',
  bindings: Record<string, unknown> = {},
  format: 'json' | 'pretty' = 'json',
): Logger {
  const opts = { level, base: { service: 'timelane', ...bindings }, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === 'json') return pino(opts);
  // Synchronous, in-process: lines keep their order with the banner on stderr, and nothing is lost at exit.
  return pino(opts, pretty({ sync: true, singleLine: true, colorize: process.stdout.isTTY === true, ignore: 'pid,hostname,service,member', translateTime: 'SYS:HH:MM:ss.l' }));
}

/** A logger that drops everything: for unit and integration tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
