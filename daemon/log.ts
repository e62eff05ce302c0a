import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout. `TIMELANE_LOG_LEVEL` (or --log-level) picks the level. */
export function createLogger(level: string = process.env.TIMELANE_LOG_LEVEL ?? 'info', bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'timelane', ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** A logger that drops everything: for unit and integration tests. */
export const silentLogger: Logger = pino({ level: 'silent' });
