/**
 * Everything a bench run starts is registered here and stopped in reverse
 * order: at the end of a trial, on error, on Ctrl-C / SIGTERM, and when the
 * run's time budget is spent.
 *
 * States of a Resources scope: open (defer() adds actions) → closing (each
 * action runs once, newest first, each bounded by `actionTimeoutMs`) →
 * closed. Child processes also register a synchronous SIGKILL for
 * process exit, so even a crash of the bench leaves no daemon behind.
 */

type Action = { name: string; fn: () => Promise<void> | void };

const live = new Set<Resources>();
const exitKills = new Set<() => void>();
let exitHookInstalled = false;

export class Resources {
  private actions: Action[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly actionTimeoutMs = 20_000) {
    live.add(this);
  }

  /** Registers a stop action; runs at closeAll(), newest first. */
  defer(name: string, fn: () => Promise<void> | void): void {
    if (this.closing) throw new Error(`Resources: closing, cannot add "${name}"`);
    this.actions.push({ name, fn });
  }

  /** Runs every action once (errors are reported, not thrown). Idempotent. */
  closeAll(): Promise<void> {
    this.closing ??= (async () => {
      for (const a of this.actions.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(a.fn),
            new Promise<void>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`timed out after ${this.actionTimeoutMs} ms`)), this.actionTimeoutMs);
            }),
          ]);
        } catch (err) {
          process.stderr.write(`bench: cleanup "${a.name}" failed: ${err instanceof Error ? err.message : String(err)}\n`);
        } finally {
          clearTimeout(timer);
        }
      }
      this.actions = [];
      live.delete(this);
    })();
    return this.closing;
  }
}

/** A synchronous last resort run on process exit (e.g. SIGKILL a child). Returns an unregister function. */
export function onExitKill(kill: () => void): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const k of exitKills) {
        try {
          k();
        } catch {
          /* already gone */
        }
      }
    });
  }
  exitKills.add(kill);
  return () => exitKills.delete(kill);
}

async function closeEverything(): Promise<void> {
  await Promise.all([...live].map((r) => r.closeAll()));
}

/**
 * Ctrl-C / SIGTERM: stop everything, then exit (130 / 143). A second signal
 * exits at once (the exit hook still SIGKILLs the children).
 * `budgetMs`: the same when the whole run takes longer than that (exit 3).
 */
export function installStopHandlers(budgetMs: number): void {
  let stopping = false;
  const stop = (why: string, code: number): void => {
    if (stopping) {
      process.stderr.write(`bench: ${why} again; exiting now\n`);
      process.exit(code);
    }
    stopping = true;
    process.stderr.write(`bench: ${why}; stopping everything it started…\n`);
    void closeEverything().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => stop('interrupted', 130));
  process.on('SIGTERM', () => stop('terminated', 143));
  const budget = setTimeout(() => stop(`time budget of ${Math.round(budgetMs / 1000)} s spent`, 3), budgetMs);
  budget.unref();
}
