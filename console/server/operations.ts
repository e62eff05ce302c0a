/**
 * Operator actions on shards (move, drain, undo drain, rebalance) started
 * from the console. The Admin RPCs wait, bounded, for the moves to land; an
 * HTTP request should not, so each action runs in the background and is
 * kept here for the page to follow.
 *
 * Owns: the last MAX_KEPT operations of this console, newest first.
 * States of one operation: running → done | failed (final).
 * Invariants: ids are unique and increasing; at most MAX_KEPT are kept
 *   (finished ones are dropped first); a running operation is never dropped.
 *
 * Progress while running is read from the shard map itself (shards whose
 * owner is not yet the one the assignment wants), not from here.
 */
export type OperationKind = 'move' | 'drain' | 'undrain' | 'rebalance';
export type OperationState = 'running' | 'done' | 'failed';

export interface OperationView {
  id: number;
  kind: OperationKind;
  /** What it acts on, e.g. "shard 3 → b" or "member a". */
  target: string;
  state: OperationState;
  startedAtMs: number;
  finishedAtMs: number;
  /** A one-line outcome ("3 moves, all landed"), or the error. */
  summary: string;
}

const MAX_KEPT = 20;
/** How long an action's answer waits for its call to be refused (the gate answers at once) or to finish. */
const EARLY_MS = 1_000;
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
/** The request itself refused: bad input, an unknown shard or member, a move that cannot be. */
const REQUEST_REFUSED: ReadonlySet<unknown> = new Set([3 /* INVALID_ARGUMENT */, 5 /* NOT_FOUND */, 9 /* FAILED_PRECONDITION */, 11 /* OUT_OF_RANGE */]);

const codeOf = (err: unknown): unknown => (typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined);

function isRefusal(err: unknown): boolean {
  const code = codeOf(err);
  return code === UNAUTHENTICATED || code === PERMISSION_DENIED;
}

export class OperationLog {
  private readonly ops: OperationView[] = [];
  private nextId = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Starts `work` in the background; its resolved summary (or error)
   * finishes the operation. A call the daemon refuses (UNAUTHENTICATED,
   * PERMISSION_DENIED) is no operation: refused within `earlyMs` it rejects
   * here (the caller answers 401/403), later it leaves the log — so callers
   * without the right cannot push the operators' results out of it. A
   * request refused as such within `earlyMs` (INVALID_ARGUMENT, NOT_FOUND,
   * FAILED_PRECONDITION: a shard out of range, no such member) rejects too
   * (400/404/409, naming what is wrong) and is not logged.
   */
  async start(kind: OperationKind, target: string, work: () => Promise<string>, earlyMs = EARLY_MS): Promise<OperationView> {
    const startedAtMs = this.now();
    const outcome = work().then(
      (summary) => ({ ok: true as const, summary }),
      (err: unknown) => ({ ok: false as const, err }),
    );
    let timer: NodeJS.Timeout | undefined;
    const early = await Promise.race([outcome, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), earlyMs)))]);
    clearTimeout(timer);
    if (early && !early.ok && (isRefusal(early.err) || REQUEST_REFUSED.has(codeOf(early.err)))) throw early.err;
    const op: OperationView = { id: this.nextId++, kind, target, state: 'running', startedAtMs, finishedAtMs: 0, summary: '' };
    this.ops.unshift(op);
    this.trim();
    const settle = (o: Awaited<typeof outcome>): void => {
      if (o.ok) this.finish(op, 'done', o.summary);
      else if (isRefusal(o.err)) this.ops.splice(this.ops.indexOf(op), 1);
      else this.finish(op, 'failed', errorText(o.err));
    };
    if (early) settle(early);
    else void outcome.then(settle);
    return { ...op };
  }

  list(): OperationView[] {
    return this.ops.map((o) => ({ ...o }));
  }

  private finish(op: OperationView, state: OperationState, summary: string): void {
    op.state = state;
    op.summary = summary;
    op.finishedAtMs = this.now();
    this.trim();
  }

  private trim(): void {
    while (this.ops.length > MAX_KEPT) {
      const i = this.ops.map((o) => o.state !== 'running').lastIndexOf(true);
      if (i < 0) return;
      this.ops.splice(i, 1);
    }
  }
}

function errorText(err: unknown): string {
  if (typeof err === 'object' && err !== null && typeof (err as { details?: unknown }).details === 'string') return (err as { details: string }).details;
  return err instanceof Error ? err.message : String(err);
}
