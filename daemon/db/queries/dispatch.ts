import { fenceOf, heldShard } from '../../coord/fence-queries.js';
import { ms } from './columns.js';
import { batchRows, deliveryBatch, IS_CURRENT_DELIVERY, IS_HIT, runOf } from './delivery-batch.js';
import { NO_OVERLAP } from './recurring.js';
import { runsById } from './runs-by-id.js';

/*
 * Run transitions made by the dispatcher. Each is ONE conditional statement:
 * the run's expected status, and either the shard's fence (claim, redeliver)
 * or the delivery's identity (fence + deliveries: complete, fail, heartbeat).
 *
 * Fenced statements hold the shard rows FOR SHARE (Temporal's
 * txExecuteShardLocked): an ownership bump waits for an in-flight claim and
 * a claim waits for, then re-checks against, an in-flight bump.
 */

/** What a fired run returns: FiredRunRow's columns (`j`: its job, or the claim's `hit` row). */
const FIRED_COLUMNS = `r.id, r.job_id, r.shard, r.queue, r.priority, r.attempt, ${ms('r.due_at')} AS due_at_ms, r.fence, r.deliveries,
  ${ms('r.lease_expires_at')} AS lease_expires_at_ms, r.idempotency_key, ${ms('r.claimed_at')} AS claimed_at_ms, ${ms('r.nominal_at')} AS nominal_at_ms,
  r.origin, r.progress, r.checkpoint, r.traceparent, r.tracestate, j.payload, j.namespace AS job_namespace, j.delivery, j.workflow_run_id, j.workflow_step, j.parent_steps, j.parent_outputs`;

/** The run's shard is held at our fence (row-locked for the transaction). $2 shards int[], $3 fences int8[]. */
const HELD = heldShard('r.shard', '$2', '$3');
/** Our fence for the run's shard. */
const OUR_FENCE = fenceOf('r.shard', '$2', '$3');

/**
 * claimRuns — fire due runs. $1 run ids int8[], $2 shards int[], $3 their
 * fences int8[], $4 claim time (local wall, epoch ms), $5 claim-ahead ms, $6
 * queues held back text[] (delivery has no room for them: HELD_BACK).
 * A run is claimed only if still scheduled, due by $4 + $5 (a rescheduled-later
 * run is skipped), not of a held-back queue, and its shard's fence matches. `claimed_at` records the
 * claim as it happened; `fired_at` (the hand-off to a worker stream) is not
 * known yet and is written later (RECORD_HAND_OFFS, or with the answer).
 * AT_MOST_ONCE runs get no lease: they are recorded as delivered here and
 * never redelivered. A run of a recurring job whose earlier run is still
 * running is left scheduled when its overlap policy says so (OVERLAP_BLOCKED
 * then decides what it becomes).
 *
 * Shape: the runs are found one by one through the primary key (`hit`, with
 * what the claim returns of their jobs), then written by key, as the answers
 * are (delivery-batch.ts). The claim is a prepared statement whose generic
 * plan is made once, maybe while `runs` is near empty: planned as one UPDATE
 * filtered by `id = ANY($1)`, it then became a full scan of another index
 * (runs_queue_status), kept as the table grew; hence runsById. The write
 * matches the very version the lookup judged (its tuple id, and the
 * transaction that wrote it): a run changed after the
 * statement's snapshot (cancelled, rescheduled, fired elsewhere) is left
 * alone, and explained as a miss. The xmin test is what Postgres re-checks on
 * the newer version whatever the plan: until a 2025 fix a Tid Scan's
 * re-check passed any version ("Add missing EPQ recheck for TID Scan"). The
 * write's own conditions are keys only, so that Postgres cannot pick another
 * index for it (runs_due, for a status test); the shards' fences stay locked
 * FOR SHARE by the lookup until commit. The lookup locks the runs it takes
 * FOR NO KEY UPDATE (the lock the write takes anyway) SKIP LOCKED: a run
 * whose row another transaction holds (a client's transaction gone silent
 * mid-CancelJob, an open psql session) is left out and explained as a miss,
 * and the claimer tries it again (claimer.ts, skippedAgain); waiting for it
 * held back every run of the claim for as long as the lock lasted
 * (test/fault/locked-run.test.ts). A run changed and committed after the
 * statement's snapshot is locked in its newest version, re-checked against
 * the lookup's conditions there, and if it still passes, the write (in the
 * snapshot) finds no row with that tuple id and xmin: a miss, claimed on the
 * retry. The lock costs ~57 B of WAL per claimed run (2,075 → 2,132 B per run
 * at 5,000 runs/s) and a second write to each claimed run's heap page. The
 * runs are looked up, so locked and written, in id order: two claims racing
 * over the same runs (a split of opinions on a shard) lock them in the same
 * order and cannot deadlock.
 */
/**
 * What the claim asks of a run ($2–$5 as in CLAIM_RUNS), its id and queue
 * aside: CLAIM_RUNS and HELD_BACK share it, so a run left for its queue is
 * exactly one the claim would otherwise have fired.
 */
const CLAIMABLE_RUN = `r.status = 'scheduled' AND r.shard = ANY($2::int[]) AND ${HELD}
  AND r.due_at <= to_timestamp(($4::int8 + $5::int8) / 1000.0) AND j.id = r.job_id AND j.shard = r.shard
  AND ${NO_OVERLAP}`;

/** What the claim returns of a run's job (FIRED_COLUMNS' `j.` columns), and its lease. */
const CLAIMED_JOB = `j.payload, j.namespace, j.delivery, j.lease_ms, j.workflow_run_id, j.workflow_step, j.parent_steps, j.parent_outputs`;

export const CLAIM_RUNS = `
WITH hit AS MATERIALIZED (
  SELECT found.* FROM ${runsById(`SELECT r.id AS run_id, r.shard AS run_shard, r.ctid AS run_ctid, r.xmin AS run_xmin, ${CLAIMED_JOB}
    FROM runs r, jobs j
    WHERE r.id = k.id AND ${CLAIMABLE_RUN} AND r.queue <> ALL($6::text[])
    FOR NO KEY UPDATE OF r SKIP LOCKED`, 'found')})
UPDATE runs r SET status = 'fired', claimed_at = to_timestamp($4::int8 / 1000.0), fired_at = NULL, lag_ms = NULL,
  fence = ${OUR_FENCE}, deliveries = r.deliveries + 1,
  lease_expires_at = CASE WHEN j.delivery = 'at_most_once' THEN NULL ELSE now() + j.lease_ms * interval '1 millisecond' END
FROM hit j
WHERE r.id = j.run_id AND r.ctid = j.run_ctid AND r.xmin = j.run_xmin AND r.shard = j.run_shard AND r.shard = ANY($2::int[])
RETURNING ${FIRED_COLUMNS}`;

/**
 * warmUpFiredRows — not a transition, and it reads no table: $1 synthetic
 * fired runs in exactly the shape CLAIM_RUNS returns (FIRED_COLUMNS over rows
 * typed as runs and jobs, negative ids), for the daemon's warm-up to parse
 * and hand through the fire path before it owns a shard (engine/warm-up.ts).
 * $1 count int.
 */
export const WARM_UP_FIRED_ROWS = `
SELECT ${FIRED_COLUMNS}
FROM generate_series(1, $1::int) g,
  LATERAL jsonb_populate_record(NULL::runs, jsonb_build_object(
    'id', -g, 'job_id', gen_random_uuid(), 'shard', 0, 'queue', 'timelane:warm-up', 'priority', 0, 'attempt', 1,
    'due_at', now(), 'fence', 1, 'deliveries', 1, 'lease_expires_at', now() + interval '30 seconds',
    'idempotency_key', 'warm-up:' || g, 'claimed_at', now())) r,
  LATERAL jsonb_populate_record(NULL::jobs, jsonb_build_object('payload', '\\x7b7d', 'namespace', 'default', 'delivery', 'at_least_once')) j`;

/**
 * heldBack — of the runs a claim did not return, those it left for their
 * queue only (CLAIMABLE_RUN, in a queue it held back), with the claim's own
 * parameters. They wait in the claimer until their queue has room; every
 * other miss is explained as before (a stale fence, a reschedule, an
 * overlap). Not a transition.
 *
 * Its runs are looked up by id (runsById): as a filter, a queue the
 * statistics had not seen (a new queue's burst) was read through
 * runs_queue_status, every scheduled run of it per call, just when the
 * claims behind it were already late.
 */
export const HELD_BACK = `
SELECT found.id, found.shard, found.queue, found.priority, found.due_at_ms
FROM ${runsById(`SELECT r.id, r.shard, r.queue, r.priority, r.due_at, (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms
    FROM runs r, jobs j
    WHERE r.id = k.id AND ${CLAIMABLE_RUN} AND r.queue = ANY($6::text[])`, 'found')}
ORDER BY found.due_at, found.priority DESC, found.id`;

/**
 * claimedInDoubt — runs a claim that errored may have fired anyway (Postgres
 * committed it, then its answer was lost): fired by exactly that claim (its
 * time, our current fence), not handed out since. Not a transition: the claim
 * made it; this finds out. $1 run ids int8[], $2 shards int[], $3 fences
 * int8[], $4 each run's claim time (epoch ms) int8[].
 */
export const CLAIMED_IN_DOUBT = `
SELECT ${FIRED_COLUMNS}
FROM runs r JOIN unnest($1::int8[], $4::int8[]) AS d(id, at_ms) ON r.id = d.id
JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard
WHERE r.shard = ANY($2::int[]) AND ${HELD} AND r.status = 'fired' AND r.fence = ${OUR_FENCE} AND r.fired_at IS NULL
  AND r.cancel_requested_at IS NULL AND r.claimed_at = to_timestamp(d.at_ms / 1000.0)`;

/**
 * redeliverExpired — hand out again fired AT_LEAST_ONCE runs whose lease ran
 * out (worker died or went silent), unless their worker was asked to stop
 * them (EXPIRE_CANCELLED ends those). $1 limit, $2 shards int[], $3 fences int8[],
 * $4 run ids int8[] this daemon holds unsent (parked for credit or a permit,
 * or restarting their lease): never handed to a worker, they are not
 * redelivered — their lease restarts at the hand-out (delivery-hub.ts); reaped,
 * they reached their worker as delivery 2, 3, … and counted as redelivered.
 * Bumps `deliveries` and takes the current fence: the old delivery is superseded.
 * The candidates are a MATERIALIZED CTE: as an `IN (subquery)` the
 * LIMIT … FOR UPDATE SKIP LOCKED subquery was rescanned per outer row, skipped
 * the rows this statement had just updated, and so redelivered past the limit.
 */
export const REDELIVER_EXPIRED = `
WITH expired AS MATERIALIZED (
  SELECT id FROM runs WHERE shard = ANY($2::int[]) AND status = 'fired'
    AND lease_expires_at IS NOT NULL AND lease_expires_at < now() AND cancel_requested_at IS NULL AND id <> ALL($4::int8[])
  ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
UPDATE runs r SET fence = ${OUR_FENCE}, deliveries = r.deliveries + 1, claimed_at = now(), fired_at = NULL, lag_ms = NULL,
  lease_expires_at = now() + j.lease_ms * interval '1 millisecond'
FROM expired e, jobs j
WHERE r.id = e.id AND r.status = 'fired' AND r.shard = ANY($2::int[]) AND ${HELD} AND j.id = r.job_id AND j.shard = r.shard
RETURNING ${FIRED_COLUMNS}`;

/**
 * expireCancelled — fired runs whose worker was asked to stop and never
 * answered in time: fired → cancelled, never redelivered. In time: within the
 * lease (AT_LEAST_ONCE), or within the job's lease after the cancel request
 * (AT_MOST_ONCE runs have no lease). $1 shards int[], $2 fences int8[].
 * Returns their ids (the hub drops them).
 */
export const EXPIRE_CANCELLED = `
UPDATE runs r SET status = 'cancelled', finished_at = now(), lease_expires_at = NULL
FROM jobs j
WHERE r.shard = ANY($1::int[]) AND ${heldShard('r.shard', '$1', '$2')} AND r.status = 'fired' AND r.cancel_requested_at IS NOT NULL
  AND j.id = r.job_id AND j.shard = r.shard
  AND ((r.lease_expires_at IS NOT NULL AND r.lease_expires_at < now())
       OR (r.lease_expires_at IS NULL AND r.cancel_requested_at < now() - j.lease_ms * interval '1 millisecond'))
RETURNING r.id`;

/**
 * expireUnansweredSteps — workflow steps delivered AT_MOST_ONCE whose worker
 * never answered within the job's lease after the hand-off (it died, or is
 * gone): fired → dead, and their job → dead. Never redelivered (that could
 * run the step twice); the workflow repair pass then ends the step failed and
 * cascades, like any dead step, so the workflow run ends and can be retried.
 * The lease counts from `fired_at` (the hand-off: written a second after it,
 * or when the stream closes), so a step waiting in the daemon for a worker or
 * for its queue's limits is not touched. A step claimed under an older fence
 * and never handed out (its owner died or let the shard go with it parked)
 * will never be: it ends the same way once its lease has passed since the
 * claim. At-most-once runs have no lease to renew: a step must answer within
 * `lease_ms` of its hand-off. $1 shards int[], $2 fences int8[], $3 limit.
 * Returns their ids (the hub drops them).
 */
export const EXPIRE_UNANSWERED_STEPS = `
WITH expired AS MATERIALIZED (
  SELECT r.id FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard
  WHERE r.shard = ANY($1::int[]) AND r.status = 'fired' AND r.lease_expires_at IS NULL AND r.origin = 'workflow'
    AND r.cancel_requested_at IS NULL AND j.delivery = 'at_most_once'
    AND (r.fired_at < now() - j.lease_ms * interval '1 millisecond'
         OR (r.fired_at IS NULL AND r.fence <> ${fenceOf('r.shard', '$1', '$2')} AND r.claimed_at < now() - j.lease_ms * interval '1 millisecond'))
  ORDER BY r.id LIMIT $3 FOR UPDATE OF r SKIP LOCKED
), run_out AS (
  UPDATE runs r SET status = 'dead', finished_at = date_trunc('milliseconds', now()),
    error = 'at-most-once step not answered within its lease: not redelivered'
  FROM expired e WHERE r.id = e.id AND r.shard = ANY($1::int[]) AND ${heldShard('r.shard', '$1', '$2')} AND r.status = 'fired'
  RETURNING r.id, r.job_id, r.shard
), job_out AS (
  UPDATE jobs SET status = 'dead', updated_at = now()
  FROM run_out WHERE jobs.id = run_out.job_id AND jobs.shard = run_out.shard AND jobs.status = 'active'
  RETURNING jobs.id
)
SELECT id FROM run_out`;

/** Identity of one delivery: $1 run id, $2 fence, $3 deliveries, $7 shard. */
const DELIVERY_MATCHES = `r.id = $1 AND r.shard = $7 AND r.status = 'fired' AND r.fence = $2 AND r.deliveries = $3`;

/** The hand-off time `sentAt` (epoch ms, null = unknown) as fired_at, unless one is recorded already. */
const RECORD_FIRED = (sentAt: string): string =>
  `fired_at = coalesce(r.fired_at, to_timestamp(${sentAt}::int8 / 1000.0)),
  lag_ms = coalesce(r.lag_ms, ${sentAt}::int8 - extract(epoch FROM r.due_at) * 1000)`;

/**
 * For an answer: the run was handed out, so when the answering daemon does
 * not know when (the answer came on another stream than the delivery, or
 * after a reconnect), fired_at is its earliest possible hand-off, the release
 * time greatest(claimed_at, due_at), rather than nothing.
 */
const RECORD_ANSWERED = (sentAt: string): string =>
  `fired_at = coalesce(r.fired_at, to_timestamp(${sentAt}::int8 / 1000.0), greatest(r.claimed_at, r.due_at)),
  lag_ms = coalesce(r.lag_ms, ${sentAt}::int8 - extract(epoch FROM r.due_at) * 1000,
    greatest(0, (extract(epoch FROM r.claimed_at) - extract(epoch FROM r.due_at)) * 1000))`;

/** What COMPLETE_RUNS completes: the current delivery of a run that is not a workflow step's. */
const COMPLETABLE = `${IS_CURRENT_DELIVERY} AND r.origin IS DISTINCT FROM 'workflow'`;

/**
 * completeRuns — fired → completed, and each one-shot job → completed (a
 * recurring job lives on), for a
 * batch of deliveries in one statement. $1 run ids int8[], $2 fences int8[],
 * $3 deliveries int[], $4 shards int[], $5 hand-off times (epoch ms, null =
 * unknown) int8[]. Returns the deliveries that matched. Runs of workflow
 * steps (origin 'workflow') are left alone: COMPLETE_STEPS
 * (queries/workflows.ts) completes them with their step. A run whose row
 * another transaction holds is skipped, not waited for (deliveryBatch's
 * skipLocked): COMPLETE_LOCKED tells it from a superseded delivery.
 */
export const COMPLETE_RUNS = `
WITH ${deliveryBatch(COMPLETABLE, undefined, true)},
run_out AS (
  UPDATE runs r SET status = 'completed', finished_at = now(), lease_expires_at = NULL, ${RECORD_ANSWERED('d.sent_at')}
  FROM hit d WHERE ${IS_HIT}
  RETURNING r.id, r.job_id, r.shard, d.fence, d.deliveries
), job_out AS (
  UPDATE jobs SET status = 'completed', updated_at = now()
  FROM run_out WHERE jobs.id = run_out.job_id AND jobs.shard = run_out.shard AND jobs.status = 'active' AND jobs.kind = 'once'
  RETURNING jobs.id
)
SELECT id, fence, deliveries FROM run_out`;

/**
 * completeLocked — of the deliveries COMPLETE_RUNS did not match, those it
 * would have completed but for a row lock another transaction holds: still
 * COMPLETABLE in this statement's snapshot, which reads without waiting. The
 * caller writes them again shortly; the others go on to the workflow path,
 * or are refused. A lock released and a change committed in between is no
 * harm: the next COMPLETE_RUNS re-checks, and refuses what is superseded.
 * Not a transition. Same parameters as COMPLETE_RUNS ($1–$5).
 */
export const COMPLETE_LOCKED = `
WITH ${batchRows()}
SELECT d.id, d.fence, d.deliveries FROM d CROSS JOIN LATERAL (${runOf(COMPLETABLE)}) found`;

/** selectRetryPolicy — what failRun needs to compute a backoff, and the workflow run of a step's run. $1 run id, $2 shard. */
export const SELECT_RETRY_POLICY = `
SELECT r.attempt, j.max_attempts, j.initial_backoff_ms, j.max_backoff_ms, j.workflow_run_id
FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard WHERE r.id = $1 AND r.shard = $2`;

/**
 * failRun — fired → failed with a retry run (attempt + 1, due after $6 ms),
 * or fired → dead (not retryable, or out of attempts), or fired → cancelled
 * (its worker had been asked to stop it: no retry). A dead run makes its
 * one-shot job dead; a recurring job lives on (the caller pauses one that
 * pauses on failure: `pause_on_failure`, PAUSE_ON_FAILURE). $1..$3 delivery, $4 retryable, $5 message, $6 backoff ms, $7
 * shard, $8 hand-off time (epoch ms, null = unknown), $9 worker id. The retry
 * keeps the idempotency key, nominal time and origin (the same occurrence),
 * the last checkpoint and progress (resume from there), and the trace
 * context (the retry belongs to the same trace). finished_at is whole
 * milliseconds: ListDeadRuns pages by (finished_at, id) with a token in ms,
 * and filters it by since_ms/until_ms against the ms a run reports.
 */
export const FAIL_RUN = `
WITH run_out AS (
  UPDATE runs r SET status = CASE WHEN r.cancel_requested_at IS NOT NULL THEN 'cancelled'
                                  WHEN $4::bool AND r.attempt < j.max_attempts THEN 'failed' ELSE 'dead' END,
    error = $5, worker_id = coalesce($9, r.worker_id), finished_at = date_trunc('milliseconds', now()), lease_expires_at = NULL, ${RECORD_ANSWERED('$8')}
  FROM jobs j
  WHERE ${DELIVERY_MATCHES} AND j.id = r.job_id AND j.shard = r.shard
  RETURNING r.id, r.job_id, r.shard, r.queue, r.priority, r.attempt, r.status, r.idempotency_key, r.nominal_at, r.origin,
    r.checkpoint, r.progress, r.traceparent, r.tracestate, j.kind, coalesce((j.recurrence ->> 'pauseOnFailure')::bool, false) AS pause_on_failure
), retry AS (
  INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, idempotency_key, nominal_at, origin, checkpoint, progress,
                    traceparent, tracestate)
  SELECT job_id, shard, queue, priority, attempt + 1, 'scheduled',
         date_trunc('milliseconds', now() + $6::int8 * interval '1 millisecond'), idempotency_key, nominal_at, origin, checkpoint, progress,
         traceparent, tracestate
  FROM run_out WHERE status = 'failed'
  RETURNING id, shard, priority, (extract(epoch FROM due_at) * 1000)::int8 AS due_at_ms
), job_out AS (
  UPDATE jobs SET status = 'dead', updated_at = now()
  FROM run_out WHERE jobs.id = run_out.job_id AND jobs.shard = run_out.shard AND run_out.status = 'dead' AND jobs.status = 'active'
    AND run_out.kind = 'once'
  RETURNING jobs.id
)
SELECT run_out.id, run_out.status, run_out.job_id, run_out.kind <> 'once' AND run_out.pause_on_failure AS pause_on_failure,
       retry.id AS retry_id, retry.shard AS retry_shard, retry.priority AS retry_priority, retry.due_at_ms AS retry_due_at_ms
FROM run_out LEFT JOIN retry ON true`;

/**
 * heartbeatRun — restart the lease of a delivery (a worker's heartbeat, or a
 * run that waited in the daemon for credit being handed out now).
 * $1..$3 delivery, $4 progress (null keeps it), $5 checkpoint (null keeps it),
 * $6 hand-off time (epoch ms, null = unknown), $7 shard, $8 worker id (null keeps it).
 */
export const HEARTBEAT_RUN = `
UPDATE runs r SET lease_expires_at = CASE WHEN r.lease_expires_at IS NULL THEN NULL
    ELSE now() + j.lease_ms * interval '1 millisecond' END,
  progress = COALESCE($4, r.progress), checkpoint = COALESCE($5, r.checkpoint), worker_id = COALESCE($8, r.worker_id), ${RECORD_ANSWERED('$6')}
FROM jobs j
WHERE ${DELIVERY_MATCHES} AND j.id = r.job_id AND j.shard = r.shard
RETURNING (extract(epoch FROM r.lease_expires_at) * 1000)::int8 AS lease_expires_at_ms`;

/**
 * expireDeliveries — a worker stream closed: let its unanswered deliveries be
 * redelivered now rather than after their lease, and record their hand-off.
 * $1 run ids, $2 fences, $3 deliveries, $4 shards int[], $5 hand-off times int8[].
 * Waits for a row another transaction holds, up to the answer pool's lock
 * bound (not on the fire path; an at-most-once step's hand-off, written here,
 * is what its expiry counts from: if this fails, Answers.expire keeps the
 * hand-off times for RECORD_HAND_OFFS).
 */
export const EXPIRE_DELIVERIES = `
WITH ${deliveryBatch(IS_CURRENT_DELIVERY)}
UPDATE runs r SET lease_expires_at = CASE WHEN r.lease_expires_at IS NULL THEN NULL ELSE now() END, ${RECORD_FIRED('d.sent_at')}
FROM hit d WHERE ${IS_HIT}`;

/** A delivery whose hand-off time is not recorded yet. */
const HAND_OFF_UNRECORDED = 'r.fence = d.fence AND r.deliveries = d.deliveries AND r.fired_at IS NULL';

/**
 * recordHandOffs — deliveries handed to a worker stream over a second ago and
 * not answered yet: write their `fired_at` (first hand-off time wins).
 * $1 run ids, $2 fences, $3 deliveries, $4 shards int[], $5 hand-off times int8[].
 * Returns the runs written. A run whose row another transaction holds is
 * skipped, not waited for: waiting, this statement held the locks it had
 * taken on the batch's other runs, and their Completes (which skip locked
 * rows) waited with it. HAND_OFFS_LOCKED finds the skipped ones, kept for the
 * next pass.
 */
export const RECORD_HAND_OFFS = `
WITH ${deliveryBatch(HAND_OFF_UNRECORDED, undefined, true)}
UPDATE runs r SET ${RECORD_FIRED('d.sent_at')}
FROM hit d WHERE ${IS_HIT}
RETURNING r.id`;

/**
 * handOffsLocked — of the deliveries RECORD_HAND_OFFS did not write, those
 * still unrecorded in this statement's snapshot (which reads without
 * waiting): skipped for a row lock. Not a transition. Same parameters.
 */
export const HAND_OFFS_LOCKED = `
WITH ${batchRows()}
SELECT d.id FROM d CROSS JOIN LATERAL (${runOf(HAND_OFF_UNRECORDED)}) found`;

/** describeDelivery — why an answer was refused. $1 run id, $2 shard. */
export const DESCRIBE_DELIVERY = `SELECT r.status, r.fence, r.deliveries FROM runs r WHERE r.id = $1 AND r.shard = $2`;

/**
 * shardsOfRuns — the shard of each run, for answers that did not say (an old
 * client). Not on the hot path. $1 run ids int8[].
 */
export const SHARDS_OF_RUNS = `SELECT r.id, r.shard FROM runs r WHERE r.id = ANY($1::int8[])`;
