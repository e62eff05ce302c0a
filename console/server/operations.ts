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

export class OperationLog {
  private readonly ops: OperationView[] = [];
  private nextId = 1;

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts `work` in the background; its resolved summary (or error) finishes the operation. */
  start(kind: OperationKind, target: string, work: () => Promise<string>): OperationView {
    const op: OperationView = { id: this.nextId++, kind, target, state: 'running', startedAtMs: this.now(), finishedAtMs: 0, summary: '' };
    this.ops.unshift(op);
    this.trim();
    work().then(
      (summary) => this.finish(op, 'done', summary),
      (err: unknown) => this.finish(op, 'failed', errorText(err)),
    );
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
