/** Shared plumbing of the CLI's client commands: connection options, parsers, error exit. */
import { Command, InvalidArgumentError } from 'commander';
import { connectionFromEnv, DEFAULT_ADDRESS, parseDuration, parseInstant, TimelaneClient } from '@timelane/client';
import { errorLine } from './format.js';

export interface ConnectionOptions {
  address: string;
  json?: boolean;
}

/** Adds `--address` (default $TIMELANE_ADDRESS or 127.0.0.1:7070) and `--json`. */
export function connectionOptions(cmd: Command): Command {
  return cmd
    .option('--address <host:port>', 'daemon address ($TIMELANE_ADDRESS)', process.env.TIMELANE_ADDRESS || DEFAULT_ADDRESS)
    .option('--json', 'print JSON instead of text');
}

/**
 * Runs `body` with a client; on failure prints "error: CODE: details" and
 * exits 1 (explicitly: a dependency's exit hook may otherwise exit 0).
 */
export async function withClient(opts: ConnectionOptions, body: (client: TimelaneClient) => Promise<void>): Promise<void> {
  let client: TimelaneClient | undefined;
  let failed = false;
  try {
    client = new TimelaneClient(opts.address, connectionFromEnv());
    await body(client);
  } catch (err) {
    failed = true;
    process.stderr.write(`${errorLine(err)}\n`);
  } finally {
    client?.close();
  }
  if (failed) process.exit(1);
}

export function fail(err: unknown): never {
  process.stderr.write(`${errorLine(err)}\n`);
  process.exit(1);
}

export function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

function argParser<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
    }
  };
}

export const durationArg = argParser(parseDuration);
export const instantArg = argParser(parseInstant);
/** An instant as ISO-8601 or as epoch milliseconds (digits only). */
export const epochArg = argParser((text) => (/^\d+$/.test(text.trim()) ? Number(text) : parseInstant(text)));

export const intArg = argParser((text) => {
  if (!/^-?\d+$/.test(text.trim())) throw new Error(`"${text}" is not an integer`);
  return Number(text);
});

/** An integer in min..max: a value the daemon refuses, or one its wire field treats as "unset" (0), is refused here. */
export function intInArg(min: number, max: number): (text: string) => number {
  return argParser((text) => {
    if (!/^-?\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) throw new Error(`"${text}" is not an integer in ${min}..${max}`);
    return Number(text);
  });
}

export const nonNegativeIntArg = argParser((text) => {
  if (!/^\d+$/.test(text.trim())) throw new Error(`"${text}" is not a non-negative integer`);
  return Number(text);
});

export const rateArg = argParser((text) => {
  const n = Number(text);
  if (text.trim() === '' || !(n >= 0 && n <= 1)) throw new Error(`"${text}" is not a number in 0..1`);
  return n;
});

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
