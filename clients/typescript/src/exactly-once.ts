/**
 * Exactly-once effects on the user's own Postgres, on top of at-least-once
 * delivery. A run is handed out again when its worker does not answer within
 * the lease (it died, hung, or its Complete was lost), and a retry after Fail
 * is a new attempt of the same occurrence; every one of those deliveries
 * carries the same `idempotencyKey` (job id + scheduled time). `exactlyOnce`
 * wraps the effect so that the effect and a row recording that key commit in
 * ONE transaction of the user's database: the key row exists if and only if
 * the effect was applied, and a later delivery that finds the row does not
 * apply it again.
 *
 * One delivery, on one pooled connection:
 *
 *   BEGIN ─▶ claim: INSERT key … ON CONFLICT DO NOTHING RETURNING key
 *              ├─ a row came back ─▶ effect(tx) ─▶ store result ─▶ COMMIT ─▶ applied
 *              └─ no row (key known) ─▶ read the earlier row ─▶ ROLLBACK ─▶ duplicate
 *   any error on the way ─▶ ROLLBACK ─▶ rethrow (the worker answers Fail, so a
 *                                       retry can apply the effect later)
 *
 * Invariants:
 * - The key row and the effect are written by the same transaction, so a
 *   crash (or kill -9, or a lost connection) before COMMIT leaves neither,
 *   and the redelivery applies the effect; a crash after COMMIT but before the
 *   worker answered leaves both, and the redelivery only finds the key.
 * - The claim comes before the effect, and the unique index makes it a lock:
 *   when two deliveries of one run overlap (a stale one past its lease and
 *   its redelivery), the second INSERT waits for the first transaction. It
 *   then sees the key (first committed) or takes it (first rolled back).
 *   Never both, and a duplicate never runs the effect at all.
 * - An unknown COMMIT outcome (connection lost during COMMIT) is safe: the
 *   handler throws, the run is retried under the same key, and the retry
 *   either finds the key or applies the effect.
 *
 * Limits — why "exactly once" holds only inside that transaction: ROLLBACK
 * undoes only what went through `tx`. An HTTP call, a message published, an
 * e-mail sent or a write to another database from inside the effect is not
 * undone when the transaction rolls back, and is done again when a delivery
 * that crashed before COMMIT is redelivered. Make such effects idempotent on
 * their own (pass the idempotency key to the other system), or write them to
 * an outbox table through `tx` and send them from there.
 *
 * Rows are never deleted here. Delete a key only once no delivery or retry of
 * its run can arrive any more (its job is completed, dead or cancelled);
 * deleting it earlier lets a late redelivery apply the effect again.
 */
import type { Pool, PoolClient } from 'pg';
import type { DeliveredRunInfo } from './types.js';
import { NonRetryableError } from './worker.js';
import type { WorkerContext } from './worker-session.js';

/** Default name of the table of applied keys. */
export const DEFAULT_EFFECTS_TABLE = 'timelane_effects';

/**
 * Lower-case identifiers only, optionally schema-qualified: quoted and
 * unquoted spellings then name the same table, and nothing else can reach
 * the SQL text (the name cannot be a query parameter).
 */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$/;

export interface ExactlyOnceOptions {
  /**
   * Table of applied keys, as created by `ensureSchema`: a lower-case SQL
   * identifier, optionally schema-qualified (`app.timelane_effects`).
   * @defaultValue 'timelane_effects'
   */
  table?: string;
}

export interface ExactlyOnceHandlerOptions extends ExactlyOnceOptions {
  /**
   * Called when a delivery's key was already recorded: the effect is not
   * applied again and the run completes. `previous.runId` differs from
   * `run.runId` when the earlier application was another attempt (a retry).
   * A throw fails the run. Default: ignored.
   */
  onDuplicate?: (run: DeliveredRunInfo, previous: AppliedEffect) => void;
}

/** The row an earlier delivery of the same occurrence committed. */
export interface AppliedEffect {
  idempotencyKey: string;
  runId: string;
  jobId: string;
  /** Start of the transaction that applied it (Postgres's clock), epoch ms. */
  appliedAtMs: number;
  /** The effect's result as stored (JSON round-tripped), null if it returned nothing. */
  result: unknown;
}

export type ExactlyOnceOutcome<T> =
  /** This delivery applied the effect and committed. */
  | { applied: true; result: T }
  /** An earlier delivery had; nothing was written. */
  | { applied: false; previous: AppliedEffect };

/** An effect on the user's database; everything it does must go through `tx`, inside the open transaction (no COMMIT/ROLLBACK of its own). */
export type Effect<T> = (tx: PoolClient, run: DeliveredRunInfo) => Promise<T>;

/**
 * Creates the table of applied keys if it is missing. Takes a transaction
 * advisory lock first, so workers starting together do not race on
 * CREATE TABLE IF NOT EXISTS (which can fail with a unique violation on the
 * catalog). The schema of a qualified name must exist.
 */
export async function ensureSchema(db: Pool, table = DEFAULT_EFFECTS_TABLE): Promise<void> {
  const name = qualifiedName(table);
  const conn = await db.connect();
  let broken: Error | undefined;
  try {
    await conn.query('BEGIN');
    await conn.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`timelane.effects:${table}`]);
    await conn.query(
      `CREATE TABLE IF NOT EXISTS ${name} (
         idempotency_key text PRIMARY KEY,
         run_id text NOT NULL,
         job_id text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now(),
         result jsonb
       )`,
    );
    await conn.query('COMMIT');
  } catch (err) {
    broken = await rollback(conn);
    throw err;
  } finally {
    conn.release(broken);
  }
}

/**
 * Applies `effect` for `run` unless an earlier delivery of the same
 * occurrence already did (see the module comment). Resolves with what
 * happened; rejects, after ROLLBACK, with the effect's (or the database's)
 * error. The result must survive JSON.stringify (a BigInt does not: the
 * delivery then rolls back and fails).
 */
export async function applyOnce<T>(db: Pool, run: DeliveredRunInfo, effect: Effect<T>, opts: ExactlyOnceOptions = {}): Promise<ExactlyOnceOutcome<T>> {
  const sql = statements(opts.table ?? DEFAULT_EFFECTS_TABLE);
  // Without a key every delivery would look new; retrying cannot fix that.
  if (!run.idempotencyKey) throw new NonRetryableError(`idempotencyKey: run ${run.runId} was delivered without one`);
  const tx = await db.connect();
  let broken: Error | undefined;
  try {
    await tx.query('BEGIN');
    const claimed = await tx.query(sql.claim, [run.idempotencyKey, run.runId, run.jobId]);
    if (claimed.rowCount === 0) {
      const previous = await tx.query<PreviousRow>(sql.previous, [run.idempotencyKey]);
      await tx.query('ROLLBACK');
      const row = previous.rows[0];
      // Only if someone deleted the key between the two statements (see "Rows are never deleted here").
      if (!row) throw new Error(`${sql.table}: key ${run.idempotencyKey} conflicted but is gone; was it deleted while its run could still be delivered?`);
      return { applied: false, previous: toApplied(run.idempotencyKey, row) };
    }
    const result = await effect(tx, run);
    const json = JSON.stringify(result);
    // Skip the round trip when there is nothing to keep (result stays NULL).
    if (json !== undefined) await tx.query(sql.record, [run.idempotencyKey, json]);
    await tx.query('COMMIT');
    return { applied: true, result };
  } catch (err) {
    broken = await rollback(tx);
    throw err;
  } finally {
    tx.release(broken);
  }
}

/**
 * Wraps `effect` as a worker handler (`createWorker({ handler: exactlyOnce(db, effect) })`):
 * each delivery runs `applyOnce`; the run completes when the effect was
 * applied now or before, and fails (to be retried) when it threw. The table
 * name is checked here, not at the first run. Each delivery holds one pool
 * connection for its whole transaction: give the pool at least the worker's
 * `concurrency` (per daemon address) or deliveries queue for connections
 * while their lease runs.
 */
export function exactlyOnce<T>(
  db: Pool,
  effect: (tx: PoolClient, run: DeliveredRunInfo, ctx: WorkerContext) => Promise<T>,
  opts: ExactlyOnceHandlerOptions = {},
): (run: DeliveredRunInfo, ctx: WorkerContext) => Promise<void> {
  const table = opts.table ?? DEFAULT_EFFECTS_TABLE;
  qualifiedName(table);
  return async (run, ctx) => {
    const outcome = await applyOnce(db, run, (tx) => effect(tx, run, ctx), { table });
    if (!outcome.applied) opts.onDuplicate?.(run, outcome.previous);
  };
}

// ------------------------------------------------------------------ SQL ---

interface PreviousRow {
  run_id: string;
  job_id: string;
  /** A Date, or a string if the application changed pg's timestamptz parser. */
  applied_at: Date | string;
  result: unknown;
}

interface Statements {
  table: string;
  /** $1 key, $2 run id, $3 job id → the key if this transaction took it, no row if it was there. */
  claim: string;
  /** $1 key → the committed row of the earlier application. */
  previous: string;
  /** $1 key, $2 result as JSON text. */
  record: string;
}

const cache = new Map<string, Statements>();

function statements(table: string): Statements {
  let s = cache.get(table);
  if (!s) {
    const t = qualifiedName(table);
    s = {
      table,
      claim: `INSERT INTO ${t} (idempotency_key, run_id, job_id) VALUES ($1, $2, $3)
              ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key`,
      previous: `SELECT run_id, job_id, applied_at, result FROM ${t} WHERE idempotency_key = $1`,
      record: `UPDATE ${t} SET result = $2::jsonb WHERE idempotency_key = $1`,
    };
    cache.set(table, s);
  }
  return s;
}

function qualifiedName(table: string): string {
  if (!TABLE_NAME.test(table))
    throw new TypeError(`table: "${table}" must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63 chars), optionally schema-qualified`);
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

function toApplied(idempotencyKey: string, row: PreviousRow): AppliedEffect {
  return { idempotencyKey, runId: row.run_id, jobId: row.job_id, appliedAtMs: new Date(row.applied_at).getTime(), result: row.result };
}

/** ROLLBACK, returning the error if even that failed (the connection is then discarded, not reused). */
async function rollback(conn: PoolClient): Promise<Error | undefined> {
  try {
    await conn.query('ROLLBACK');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}
