import { heldShard } from '../../coord/fence-queries.js';
import { JOB_COLUMNS, RUN_COLUMNS } from './columns.js';
import { runsById } from './runs-by-id.js';

/*
 * Recurring jobs: their creation, the materialiser's pass, overlap, and the
 * operator's verbs (pause, resume, update, trigger, backfill). Each state
 * transition is one conditional statement; a run of a recurring job carries
 * `origin` (never NULL), which is how these statements tell them apart.
 */


/**
 * A run of the job `o` is running: fired (handed out, unanswered) or a
 * scheduled retry of an occurrence. What the overlap policy waits for. An
 * AT_MOST_ONCE run has no lease and is never redelivered, so an unanswered
 * one counts as running only for its job's lease (`leaseMs`, an SQL
 * expression) after its claim: a worker that died with it does not hold the
 * job back forever.
 */
const RUNNING = (o: string, leaseMs: string): string => `${o}.origin IS NOT NULL AND (
      (${o}.status = 'fired' AND (${o}.lease_expires_at IS NOT NULL OR ${o}.claimed_at > now() - ${leaseMs} * interval '1 millisecond'))
      OR (${o}.status = 'scheduled' AND ${o}.attempt > 1))`;

/**
 * The run `o` holds back the run `r` of the same job: `o` is running, or `o`
 * is an older occurrence already due and not started (waiting in the buffer,
 * or promoted from it and not claimed yet) — so occurrences start in order,
 * one at a time, and a new one never overtakes a buffered one.
 */
const HOLDS_BACK = (o: string, r: string): string => `${o}.id <> ${r}.id AND (${RUNNING(o, 'j.lease_ms')}
      OR (${o}.origin IS NOT NULL AND ${o}.status IN ('scheduled', 'buffered') AND ${o}.due_at <= now()
          AND (coalesce(${o}.nominal_at, ${o}.due_at), ${o}.id) < (coalesce(${r}.nominal_at, ${r}.due_at), ${r}.id)))`;

/** Runs that ignore the overlap policy: retries, forced triggers, backfills (ordered by buffering instead). */
export const OVERLAP_EXEMPT = `(r.attempt > 1 OR r.origin IN ('trigger_forced', 'backfill'))`;

/**
 * The claim's overlap condition (CLAIM_RUNS, OVERLAP_BLOCKED: $2 is their
 * shards): a one-shot job never overlaps (its overlap is 'allow_all', tested
 * first so its runs pay nothing more).
 */
export const NO_OVERLAP = `(j.overlap = 'allow_all' OR r.origin IS NULL OR ${OVERLAP_EXEMPT}
    OR NOT EXISTS (SELECT 1 FROM runs o WHERE o.job_id = r.job_id AND o.shard = ANY($2::int[]) AND o.shard = r.shard AND ${HOLDS_BACK('o', 'r')}))`;

/**
 * insertRecurringJobs — recurring jobs, their progress already planned. $1 ids
 * uuid[], $4 shards int[], $2 namespaces, $3 queues text[], $5 payloads
 * bytea[], $6 priorities int[], $7 dedupe keys text[], $8 deliveries text[],
 * $9 max attempts, $10 initial backoffs, $11 max backoffs, $12 leases int[],
 * $13 kinds text[], $14 rules jsonb[], $15 overlaps text[], $16 next fire
 * times int8[] (null: ended), $17 occurrences made int[]. A request whose
 * (namespace, dedupe key) exists is skipped. Returns the ids inserted.
 */
export const INSERT_RECURRING_JOBS = `
INSERT INTO jobs (id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts, initial_backoff_ms,
                  max_backoff_ms, lease_ms, status, kind, recurrence, overlap, next_fire_at, occurrences)
SELECT id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts, initial_backoff_ms,
       max_backoff_ms, lease_ms, CASE WHEN next_ms IS NULL THEN 'completed' ELSE 'active' END, kind, recurrence, overlap,
       to_timestamp(next_ms::float8 / 1000), occurrences
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::bytea[], $6::int[], $7::text[], $8::text[], $9::int[],
            $10::int[], $11::int[], $12::int[], $13::text[], $14::jsonb[], $15::text[], $16::int8[], $17::int[])
  AS t(id, namespace, queue, shard, payload, priority, dedupe_key, delivery, max_attempts, initial_backoff_ms,
       max_backoff_ms, lease_ms, kind, recurrence, overlap, next_ms, occurrences)
ON CONFLICT (namespace, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
RETURNING id`;

/** What every statement that makes runs of recurring jobs returns. */
export interface OccurrenceRow {
  id: number;
  job_id: string;
  shard: number;
  priority: number;
  status: 'scheduled' | 'missed' | 'buffered';
  due_at_ms: number;
  nominal_at_ms: number | null;
}
const OCCURRENCE_RETURNING = (t: string): string => `RETURNING ${t}id, ${t}job_id, ${t}shard, ${t}priority, ${t}status,
  (extract(epoch FROM ${t}due_at) * 1000)::int8 AS due_at_ms, (extract(epoch FROM ${t}nominal_at) * 1000)::int8 AS nominal_at_ms`;

/**
 * insertOccurrences — runs for occurrences of recurring jobs. $1 job ids
 * uuid[], $2 shards int[], $3 nominal times int8[] (null: not an occurrence,
 * e.g. a trigger), $4 due times int8[], $5 statuses text[] ('scheduled',
 * 'missed', 'buffered'), $6 origin text. Queue and priority come from the
 * job. An occurrence that already has a run is not made again (runs_occurrence):
 * whoever made it first — an earlier pass, a zombie owner, a racing daemon — wins.
 */
export const INSERT_OCCURRENCES = `
INSERT INTO runs (job_id, shard, queue, priority, attempt, status, due_at, nominal_at, origin, idempotency_key, finished_at)
SELECT o.job_id, o.shard, j.queue, j.priority, 1, o.status, to_timestamp(o.due_ms::float8 / 1000),
       to_timestamp(o.nominal_ms::float8 / 1000), $6::text,
       -- An occurrence's key is its nominal time; a trigger's is unique (two may share a millisecond).
       o.job_id || ':' || coalesce(o.nominal_ms::text, $6::text || ':' || gen_random_uuid()::text),
       CASE WHEN o.status = 'missed' THEN now() END
FROM unnest($1::uuid[], $2::int[], $3::int8[], $4::int8[], $5::text[]) WITH ORDINALITY AS o(job_id, shard, nominal_ms, due_ms, status, ord)
JOIN jobs j ON j.id = o.job_id AND j.shard = o.shard
ORDER BY o.ord
ON CONFLICT (job_id, nominal_at) WHERE nominal_at IS NOT NULL AND attempt = 1 DO NOTHING
${OCCURRENCE_RETURNING('')}`;

/**
 * existingOccurrences — nominal times (ms) of a job's occurrences with a run
 * from $2 (ms) on (runs_occurrence). $1 job id.
 */
export const EXISTING_OCCURRENCES = `
SELECT (extract(epoch FROM r.nominal_at) * 1000)::int8 AS nominal_ms FROM runs r
WHERE r.job_id = $1 AND r.attempt = 1 AND r.nominal_at >= to_timestamp($2::int8 / 1000.0)`;

/** A recurring job as the materialiser plans it. */
export interface DueRecurringRow {
  id: string;
  shard: number;
  recurrence: unknown;
  next_fire_at_ms: number;
  occurrences: number;
}

/**
 * selectDueRecurring — active recurring jobs of our fenced shards whose next
 * occurrence is due by $4 (epoch ms): per shard, the $1 earliest, locked for
 * this pass (a concurrent pass or verb skips them: next time). The shard rows
 * stay locked FOR SHARE until commit: the pass is fenced. $2 shards, $3 fences.
 *
 * Per shard through LATERAL, in `jobs_next_fire` order: a plain index scan,
 * which marks the index entries of dead job versions as dead as it passes
 * (every pass leaves one per job it advances). The bitmap scan this replaced
 * (one scan for all shards, no ORDER BY) never does: with 100,000 jobs it
 * visited 37,000 heap pages to return 500 live rows, 100–170 ms a batch.
 * A quota per shard keeps every shard's earliest jobs in every batch.
 */
export const SELECT_DUE_RECURRING = `
SELECT j.id, j.shard, j.recurrence, j.next_fire_at_ms, j.occurrences
FROM unnest($2::int[]) AS o(shard)
CROSS JOIN LATERAL (
  SELECT j.id, j.shard, j.recurrence, (extract(epoch FROM j.next_fire_at) * 1000)::int8 AS next_fire_at_ms, j.occurrences
  FROM jobs j
  WHERE j.shard = o.shard AND j.shard = ANY($2::int[]) AND j.next_fire_at IS NOT NULL AND j.next_fire_at <= to_timestamp($4::int8 / 1000.0)
    AND j.status = 'active'
  ORDER BY j.next_fire_at
  LIMIT $1
  FOR UPDATE OF j SKIP LOCKED) j
WHERE ${heldShard('o.shard', '$2', '$3')}`;

/**
 * advanceJobs — record passes: next occurrence, occurrences made, misses. The
 * job must still be active at the next_fire_at the pass started from. A rule
 * that ended (next null) completes the job. $1 ids uuid[], $2 shards int[],
 * $3 previous next (ms) int8[], $4 new next (ms, null: ended) int8[],
 * $5 made int[], $6 missed int8[].
 */
export const ADVANCE_JOBS = `
UPDATE jobs j SET next_fire_at = to_timestamp(p.next_ms::float8 / 1000), occurrences = j.occurrences + p.made,
  missed_count = j.missed_count + p.missed, updated_at = now(),
  status = CASE WHEN p.next_ms IS NULL THEN 'completed' ELSE j.status END
FROM unnest($1::uuid[], $2::int[], $3::int8[], $4::int8[], $5::int[], $6::int8[]) AS p(id, shard, prev_ms, next_ms, made, missed)
WHERE j.id = p.id AND j.shard = p.shard AND j.status = 'active'
  AND j.next_fire_at = to_timestamp(p.prev_ms::float8 / 1000)`;

/**
 * overlapBlocked — runs the claim left because an earlier run of their job is
 * running: scheduled → skipped (skip, or buffer_one with one already
 * waiting) or → buffered (buffer_all, buffer_one, cancel_other). Fenced like
 * the claim. $1 run ids int8[], $2 shards, $3 fences. Returns what it
 * changed, with the job's policy.
 *
 * Shaped like the claim (CLAIM_RUNS): the runs are looked up by id
 * (runsById), judged (`hit`), then written by tuple id, only in the version
 * the lookup judged. A run changed meanwhile is left as that change made it;
 * the caller offers it again if SCHEDULED_STATUS still finds it scheduled.
 * As a filter, occurrences the statistics had not seen were read through
 * runs_job_live, every scheduled occurrence of every job, per call.
 */
export const OVERLAP_BLOCKED = `
WITH hit AS MATERIALIZED (
  SELECT r.run_id, r.run_shard, r.run_ctid, r.run_xmin, j.overlap
  FROM ${runsById(`SELECT r.id, r.id AS run_id, r.shard AS run_shard, r.ctid AS run_ctid, r.xmin AS run_xmin, r.job_id, r.shard, r.origin,
           r.attempt, r.nominal_at, r.due_at, j.overlap, j.lease_ms
    FROM runs r, jobs j
    WHERE r.id = k.id AND r.shard = ANY($2::int[]) AND ${heldShard('r.shard', '$2', '$3')} AND r.status = 'scheduled'
      AND j.id = r.job_id AND j.shard = r.shard`, 'r')} CROSS JOIN LATERAL (SELECT r.overlap, r.lease_ms) j
  -- Outside the lookup: inside, its "origin IS NOT NULL" made Postgres read runs_job_live for every id.
  WHERE NOT ${NO_OVERLAP})
UPDATE runs r SET (status, finished_at) = (
  -- A skipped run has ended (finished_at), whichever policy skipped it; a buffered one has not.
  SELECT v.status, CASE WHEN v.status = 'skipped' THEN now() END
  FROM (SELECT CASE
    WHEN h.overlap IN ('buffer_all', 'cancel_other') THEN 'buffered'
    -- buffer_one: only when none waits yet, and only the oldest of the runs held back together.
    WHEN h.overlap = 'buffer_one'
      AND NOT EXISTS (SELECT 1 FROM runs q WHERE q.job_id = r.job_id AND q.shard = ANY($2::int[]) AND q.status = 'buffered')
      AND NOT EXISTS (SELECT 1 FROM runs q2 WHERE q2.id = ANY($1::int8[]) AND q2.shard = ANY($2::int[]) AND q2.job_id = r.job_id
                      AND q2.status = 'scheduled' AND (coalesce(q2.nominal_at, q2.due_at), q2.id) < (coalesce(r.nominal_at, r.due_at), r.id))
      THEN 'buffered'
    ELSE 'skipped' END AS status OFFSET 0) v) -- OFFSET 0: one evaluation per run, not one per column
FROM hit h
WHERE r.id = h.run_id AND r.ctid = h.run_ctid AND r.xmin = h.run_xmin AND r.shard = h.run_shard AND r.shard = ANY($2::int[])
RETURNING r.id, r.status, h.overlap`;

/**
 * cancelOthers — overlap cancel_other: for each job of these newly buffered
 * runs, older buffered runs are skipped (only the newest waits), its
 * running runs are marked cancel-requested, and its retries waiting for
 * their backoff are cancelled; returns the running ones, whose workers the
 * caller tells to stop. The buffered run starts once they have stopped.
 * $1 newly buffered run ids int8[], $2 their shards int[].
 */
export const CANCEL_OTHERS = `
WITH newest AS (
  SELECT DISTINCT ON (job_id) id, job_id FROM runs WHERE id = ANY($1::int8[]) AND shard = ANY($2::int[])
  ORDER BY job_id, coalesce(nominal_at, due_at) DESC, id DESC
), older AS (
  UPDATE runs b SET status = 'skipped', finished_at = now()
  FROM newest n WHERE b.job_id = n.job_id AND b.shard = ANY($2::int[]) AND b.status = 'buffered' AND b.id <> n.id
  RETURNING b.id
), running AS (
  UPDATE runs o SET cancel_requested_at = now()
  FROM newest n WHERE o.job_id = n.job_id AND o.shard = ANY($2::int[]) AND o.status = 'fired' AND o.origin IS NOT NULL
    AND o.cancel_requested_at IS NULL
  RETURNING o.id
), retrying AS (
  -- A retry waiting for its backoff counts as running (RUNNING): it is stopped too, at once (no worker holds it).
  UPDATE runs o SET status = 'cancelled', finished_at = now()
  FROM newest n WHERE o.job_id = n.job_id AND o.shard = ANY($2::int[]) AND o.status = 'scheduled' AND o.attempt > 1
    AND o.origin IS NOT NULL
  RETURNING o.id
)
SELECT id FROM running`;

/**
 * promoteBuffered — for each job of our fenced shards with nothing running
 * and nothing due and not yet claimed (a run promoted by the previous pass),
 * its oldest buffered run → scheduled (its due time stays: the run fires at
 * once, its order among the job's runs and its lateness are kept). $1 limit,
 * $2 shards, $3 fences.
 */
export const PROMOTE_BUFFERED = `
WITH next AS MATERIALIZED (
  SELECT DISTINCT ON (b.job_id) b.id FROM runs b
  JOIN jobs j ON j.id = b.job_id AND j.shard = b.shard
  WHERE b.shard = ANY($2::int[]) AND b.status = 'buffered'
    AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.job_id = b.job_id AND o.shard = ANY($2::int[])
                    AND (${RUNNING('o', 'j.lease_ms')} OR (o.origin IS NOT NULL AND o.status = 'scheduled' AND o.due_at <= now())))
  -- The claim's order (HOLDS_BACK): a trigger or replay has no nominal time, its due time stands in.
  ORDER BY b.job_id, coalesce(b.nominal_at, b.due_at), b.id
  LIMIT $1)
UPDATE runs r SET status = 'scheduled' -- due_at stays: it was due already, and its wait is its lateness
FROM next n
WHERE r.id = n.id AND r.shard = ANY($2::int[]) AND r.status = 'buffered' AND ${heldShard('r.shard', '$2', '$3')}
${OCCURRENCE_RETURNING('r.')}`;

/** lockJob — a job, locked for a verb's transaction. $1 job id. */
export const LOCK_JOB = `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.id = $1 FOR UPDATE`;

/**
 * pauseJob — active recurring job → paused. $1 job id, $2 note. Returns the
 * job's id when it changed.
 */
export const PAUSE_JOB = `
UPDATE jobs SET status = 'paused', pause_note = $2, updated_at = now()
WHERE id = $1 AND status = 'active' AND kind <> 'once'
RETURNING id`;

/**
 * pauseOnFailure — an active recurring job → paused, because run $2 ended
 * dead. $1 job id. Takes the job's row lock (after any materialiser pass on
 * it), so a WITHDRAW_OCCURRENCES that follows in the same transaction sees
 * every occurrence made. Returns the id when it changed.
 */
export const PAUSE_ON_FAILURE = `
UPDATE jobs SET status = 'paused', pause_note = 'paused on failure: run ' || $2::int8 || ' is dead', updated_at = now()
WHERE id = $1 AND status = 'active' AND kind <> 'once'
RETURNING id`;

/**
 * withdrawOccurrences — occurrences made but not fired are taken back (they
 * never happened): the job's next occurrence goes back to the earliest of
 * them, and they no longer count toward the limit. $1 job id, $2 epoch ms:
 * only those whose nominal time is later (an UpdateJob, whose new rule
 * starts after $2: an occurrence whose time has passed fires by the old rule,
 * even if its jitter puts it later) — null: all, buffered ones too (a pause).
 * Returns the withdrawn run ids with their shard.
 */
export const WITHDRAW_OCCURRENCES = `
WITH gone AS (
  DELETE FROM runs r WHERE r.job_id = $1 AND r.attempt = 1 AND r.origin = 'schedule'
    AND (r.status = 'scheduled' OR (r.status = 'buffered' AND $2::int8 IS NULL))
    AND ($2::int8 IS NULL OR r.nominal_at > to_timestamp($2::int8 / 1000.0))
  RETURNING r.id, r.shard, r.nominal_at
), job_out AS (
  UPDATE jobs j SET next_fire_at = CASE WHEN j.next_fire_at IS NULL THEN (SELECT min(nominal_at) FROM gone)
                                        ELSE least(j.next_fire_at, (SELECT min(nominal_at) FROM gone)) END,
    occurrences = greatest(0, j.occurrences - (SELECT count(*) FROM gone)::int), updated_at = now()
  WHERE j.id = $1 AND EXISTS (SELECT 1 FROM gone)
  RETURNING j.id
)
SELECT id, shard FROM gone`;

/**
 * resumeJob — paused → active. $3 true: from the stored next occurrence (the
 * pause is caught up by the job's catch-up rule); false: from $2 (epoch ms;
 * null: the rule has no occurrence left, and the job completes). $1 job id.
 */
export const RESUME_JOB = `
UPDATE jobs SET pause_note = NULL, updated_at = now(),
  next_fire_at = CASE WHEN $3::bool THEN next_fire_at ELSE to_timestamp($2::int8 / 1000.0) END,
  status = CASE WHEN NOT $3::bool AND $2::int8 IS NULL THEN 'completed' ELSE 'active' END
WHERE id = $1 AND status = 'paused'
RETURNING id`;

/**
 * updateJob — new rule and settings of a job (null keeps a value), and for a
 * recurring job its next occurrence $9 (ms). $1 job id, $2 rule jsonb, $3
 * overlap, $4 payload, $5 priority, $6 max attempts, $7 initial backoff, $8
 * max backoff, $10 lease ms, $11 whether $9 applies.
 */
export const UPDATE_JOB = `
UPDATE jobs SET recurrence = coalesce($2::jsonb, recurrence), overlap = coalesce($3, overlap), payload = coalesce($4, payload),
  priority = coalesce($5, priority), max_attempts = coalesce($6, max_attempts), initial_backoff_ms = coalesce($7, initial_backoff_ms),
  max_backoff_ms = coalesce($8, max_backoff_ms), lease_ms = coalesce($10, lease_ms),
  next_fire_at = CASE WHEN $11::bool THEN to_timestamp($9::int8 / 1000.0) ELSE next_fire_at END,
  status = CASE WHEN $11::bool AND $9::int8 IS NULL AND status = 'active' THEN 'completed'
                WHEN $11::bool AND $9::int8 IS NOT NULL AND status = 'completed' AND kind <> 'once' THEN 'active' ELSE status END,
  updated_at = now()
WHERE id = $1 AND status IN ('active', 'paused', 'completed')
RETURNING id, status`;

/** Scheduled runs of a job take its new priority. $1 job id, $2 priority. */
export const REPRIORITISE_RUNS = `UPDATE runs SET priority = $2 WHERE job_id = $1 AND status IN ('scheduled', 'buffered')`;

/**
 * listJobs — a page of jobs by id, without payloads. $1 queue, $2 kind, $3
 * status, $4 namespace (each null = any), $5 after id (null = first page), $6 limit.
 */
export const LIST_JOBS = `
SELECT ${JOB_COLUMNS.replace('j.payload', `'\\x'::bytea AS payload`)} FROM jobs j
WHERE ($1::text IS NULL OR j.queue = $1) AND ($2::text IS NULL OR j.kind = $2) AND ($3::text IS NULL OR j.status = $3)
  AND ($4::text IS NULL OR j.namespace = $4) AND ($5::uuid IS NULL OR j.id > $5)
ORDER BY j.id LIMIT $6`;

/**
 * jobCounts — outcomes of a job's runs. $1 job id. `fired`: every run a
 * claim took, whatever became of it (as status 'fired' counts from the
 * claim): a cancelled run was fired if `deliveries` > 0.
 */
export const JOB_COUNTS = `
SELECT count(*) FILTER (WHERE r.status IN ('fired', 'completed', 'failed', 'dead') OR (r.status = 'cancelled' AND r.deliveries > 0))::int8 AS fired,
       count(*) FILTER (WHERE r.status = 'completed')::int8 AS completed,
       count(*) FILTER (WHERE r.status = 'dead')::int8 AS dead,
       count(*) FILTER (WHERE r.status = 'skipped')::int8 AS skipped,
       count(*) FILTER (WHERE r.status IN ('scheduled', 'buffered'))::int8 AS scheduled
FROM runs r WHERE r.job_id = $1`;

export interface JobCountsRow {
  fired: number;
  completed: number;
  dead: number;
  skipped: number;
  scheduled: number;
}

/** latestRuns — a job's latest runs, newest first. $1 job id, $2 how many. */
export const LATEST_RUNS = `SELECT ${RUN_COLUMNS} FROM runs r WHERE r.job_id = $1 ORDER BY r.id DESC LIMIT $2`;

/** upcomingRuns — a job's runs waiting for their due time, earliest first. $1 job id, $2 how many. */
export const UPCOMING_RUNS = `
SELECT (extract(epoch FROM r.due_at) * 1000)::int8 AS due_at_ms FROM runs r
WHERE r.job_id = $1 AND r.status = 'scheduled' AND r.origin IS NOT NULL ORDER BY r.due_at LIMIT $2`;
