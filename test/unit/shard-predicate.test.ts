/**
 * Every hot statement names its shard, so `runs` (and `jobs`) can be
 * distributed by `shard` on a distributed Postgres (Citus) without changing a
 * query: a statement restricted by `shard = $n` / `shard = ANY($n)` is routed
 * to, or pruned to, the nodes holding those shards, and its row locks and
 * fence checks stay local to one node per shard.
 *
 * The rule, per statement of the hot path below:
 * - every reference to `runs` (UPDATE / FROM / JOIN) is restricted, in its own
 *   query block, by a *parameter* on its shard: `r.shard = $n` or
 *   `r.shard = ANY($n…)` — a join to `shards` alone does not let Citus prune;
 * - every `INSERT INTO runs` names the `shard` column (rows are routed by it);
 * - every reference to `jobs` is co-located with the runs it serves: joined on
 *   `j.shard = r.shard` (or restricted by a shard parameter) — needed once
 *   `jobs` is distributed by `shard` too (README, "Past one Postgres").
 *
 * The list is explicit and the modules are checked for completeness: a new
 * statement in dispatch.ts, window.ts or recurring.ts fails this file until it is listed as
 * hot (and names its shard) or as not hot, with the reason.
 */
import { describe, expect, it } from 'vitest';
import * as dispatchQueries from '../../daemon/db/queries/dispatch.js';
import * as windowQueries from '../../daemon/db/queries/window.js';
import * as recurringQueries from '../../daemon/db/queries/recurring.js';

// ------------------------------------------------------------------ checker ---

/** A reference to a table in a statement, and what is wrong with it (null: restricted by shard). */
interface Finding {
  table: 'runs' | 'jobs';
  alias: string;
  /** The reference as written, e.g. "UPDATE runs r". */
  at: string;
  problem: string | null;
}

const KEYWORDS = new Set(['where', 'set', 'join', 'on', 'using', 'left', 'right', 'inner', 'cross', 'order', 'group', 'limit', 'returning', 'values', 'select', 'for', 'as', 'with']);
const STATEMENT_IN_GROUP = /\b(select|update|insert|delete)\b/i;

/** The innermost parenthesised group around `index` (or the whole text), with nested statement groups blanked out. */
function queryBlock(sql: string, index: number): string {
  let depth = 0;
  let start = 0;
  for (let i = index - 1; i >= 0; i--) {
    if (sql[i] === ')') depth++;
    else if (sql[i] === '(') {
      if (depth === 0) {
        start = i + 1;
        break;
      }
      depth--;
    }
  }
  let end = sql.length;
  depth = 0;
  for (let i = index; i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')') {
      if (depth === 0) {
        end = i;
        break;
      }
      depth--;
    }
  }
  return blankNestedStatements(sql.slice(start, end));
}

/** Replaces every parenthesised group that holds its own SELECT/UPDATE/INSERT/DELETE by "(…)": another block's predicates do not count here. */
function blankNestedStatements(block: string): string {
  let out = '';
  for (let i = 0; i < block.length; i++) {
    if (block[i] !== '(') {
      out += block[i];
      continue;
    }
    let depth = 0;
    let j = i;
    for (; j < block.length; j++) {
      if (block[j] === '(') depth++;
      else if (block[j] === ')' && --depth === 0) break;
    }
    const group = block.slice(i, j + 1);
    out += STATEMENT_IN_GROUP.test(group) ? '(…)' : group;
    i = j;
  }
  return out;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `<col> = $n` or `<col> = ANY($n…)` for the given column expression (regex source). */
const paramPredicate = (col: string): RegExp => new RegExp(`${col}\\s*=\\s*(?:\\$\\d+|ANY\\s*\\(\\s*\\$\\d+)`, 'i');

/** How a reference's shard column is written: `r.shard`, or bare `shard` / `runs.shard` when unaliased. */
function shardColumn(table: string, alias: string): string {
  return alias === table ? `(?<![\\w.])(?:${table}\\.)?shard\\b` : `\\b${escape(alias)}\\.shard\\b`;
}

/** Every reference to `runs` and `jobs` in `sql`, each with its problem (null when it names its shard). */
function shardFindings(rawSql: string): Finding[] {
  const sql = rawSql.replace(/--[^\n]*/g, '');
  const out: Finding[] = [];
  const ref = /(\bUPDATE|\bFROM|\bJOIN|\bINTO|,)\s*(runs|jobs)\b(?:\s+(?:AS\s+)?([a-z_][a-z0-9_]*))?/gi;
  for (let m = ref.exec(sql); m !== null; m = ref.exec(sql)) {
    const table = m[2].toLowerCase() as 'runs' | 'jobs';
    const aliasWord = m[3]?.toLowerCase();
    const alias = aliasWord && !KEYWORDS.has(aliasWord) ? aliasWord : table;
    const at = `${m[1].toUpperCase()} ${table}${alias === table ? '' : ` ${alias}`}`;
    const block = queryBlock(sql, m.index);
    let problem: string | null = null;
    if (m[1].toUpperCase() === 'INTO') {
      const cols = new RegExp(`INTO\\s+${table}\\s*\\(([^)]*)\\)`, 'i').exec(sql.slice(m.index));
      if (!cols || !/\bshard\b/i.test(cols[1])) problem = `INSERT INTO ${table} does not name the shard column`;
    } else {
      const col = shardColumn(table, alias);
      const byParam = paramPredicate(col).test(block);
      // jobs may instead be joined co-located with a relation that is itself restricted: j.shard = r.shard.
      const coLocated =
        table === 'jobs' &&
        (new RegExp(`${col}\\s*=\\s*[a-z_][a-z0-9_]*\\.shard\\b`, 'i').test(block) ||
          new RegExp(`\\b[a-z_][a-z0-9_]*\\.shard\\s*=\\s*${col}`, 'i').test(block));
      if (!byParam && !coLocated) {
        problem =
          table === 'runs'
            ? `${at}: no ${alias}.shard = $n / = ANY($n) in its query block`
            : `${at}: not joined on ${alias}.shard = <runs>.shard (nor restricted by a shard parameter)`;
      }
    }
    out.push({ table, alias, at, problem });
  }
  return out;
}

/** Problems of `table` references only. */
function problems(sql: string, table: 'runs' | 'jobs'): string[] {
  return shardFindings(sql)
    .filter((f) => f.table === table && f.problem !== null)
    .map((f) => f.problem as string);
}

// ------------------------------------------------------------- the list ---

/** Every named statement of the modules that hold the hot path. */
const STATEMENTS = new Map<string, string>(
  [...Object.entries(dispatchQueries), ...Object.entries(windowQueries), ...Object.entries(recurringQueries)].filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  ),
);

/**
 * The hot path: statements run per fired run, per due run, per answer, or per
 * owned shard on a timer. A new statement on this path goes here.
 */
const HOT: Record<string, string> = {
  CLAIM_RUNS: 'claim: the fenced fire, batched per tick',
  REDELIVER_EXPIRED: 'redelivery reaper, every reap interval over the owned shards',
  CLAIMED_IN_DOUBT: 'after a claim that errored: the runs it may have fired (rare, but over the fire path\'s tables)',
  COMPLETE_RUNS: 'answers: Complete (batched)',
  COMPLETE_LOCKED: 'answers: Completes COMPLETE_RUNS did not match, to tell a locked row from a superseded delivery',
  FAIL_RUN: 'answers: Fail, and the retry run it inserts',
  SELECT_RETRY_POLICY: "answers: Fail, the job's backoff policy",
  HEARTBEAT_RUN: 'answers: Heartbeat, and a run parked for credit restarting its lease as it is handed out',
  EXPIRE_DELIVERIES: "answers: a closed stream's unanswered deliveries",
  RECORD_HAND_OFFS: 'hand-off times of deliveries not answered within a second',
  HAND_OFFS_LOCKED: 'hand-off times RECORD_HAND_OFFS did not write: which were skipped for a row lock',
  DESCRIBE_DELIVERY: 'answers: why a delivery was refused',
  LOAD_WINDOW_PAGE: 'window load, repair scan and rebuild on acquisition — one paged statement',
  SCHEDULED_STATUS: 'claim misses: which popped runs are still scheduled',
  HELD_BACK: 'claim misses: which popped runs the claim left for their full queue',
  EXPIRE_CANCELLED: 'redelivery reaper: runs asked to stop whose lease ended',
  EXPIRE_UNANSWERED_STEPS: 'redelivery reaper: at-most-once workflow steps not answered within their lease',
  OVERLAP_BLOCKED: "claim misses: runs held back by their job's overlap policy",
  CANCEL_OTHERS: 'claim misses: overlap cancel_other',
  INSERT_OCCURRENCES: 'materialiser pass (and the verbs that make occurrences)',
  PROMOTE_BUFFERED: 'materialiser pass: buffered runs whose job has nothing running',
};

/** Named statements of those modules that are not hot, and why. */
const NOT_HOT: Record<string, string> = {
  SHARDS_OF_RUNS: 'answers from old clients that do not send the shard: finds it by run id (every node)',
  SHARD_FENCES: 'reads `shards` only (already by shard), on a claim miss',
  DB_CLOCK: 'no table: the clock-skew probe',
  WARM_UP_FIRED_ROWS: 'no table: synthetic rows typed as runs and jobs, for the warm-up before any shard is owned',
  SELECT_DUE_RECURRING: 'materialiser pass: reads `jobs` only, per shard of $2 (j.shard = ANY($2))',
  ADVANCE_JOBS: 'materialiser pass: writes `jobs` only, each row by its own shard from the parameters',
  NO_OVERLAP: 'a fragment of CLAIM_RUNS and OVERLAP_BLOCKED (checked there)',
  OVERLAP_EXEMPT: 'a fragment of NO_OVERLAP',
  INSERT_RECURRING_JOBS: 'Schedule of recurring jobs: inserts jobs only, shard named per row',
  LOCK_JOB: 'operator verbs, by job id',
  EXISTING_OCCURRENCES: 'a resume or an update, by job id (runs_occurrence)',
  PAUSE_JOB: 'operator verbs, by job id',
  WITHDRAW_OCCURRENCES: 'operator verbs, by job id (and a Fail that pauses its job)',
  PAUSE_ON_FAILURE: 'a Fail whose run ends dead and whose job pauses on failure: one job, by id',
  RESUME_JOB: 'operator verbs, by job id',
  UPDATE_JOB: 'operator verbs, by job id',
  REPRIORITISE_RUNS: 'operator verbs, by job id',
  LIST_JOBS: 'API read (ListJobs)',
  JOB_COUNTS: 'API read (GetJob)',
  LATEST_RUNS: 'API read (GetJob)',
  UPCOMING_RUNS: 'API read (GetJob)',
};



const sqlOf = (name: string): string => {
  const sql = STATEMENTS.get(name);
  if (sql === undefined) throw new Error(`${name} is listed but dispatch.ts / window.ts export no such statement`);
  return sql;
};

// ---------------------------------------------------------------- tests ---

describe('every hot statement names its shard', () => {
  it('the list is complete: every statement of dispatch.ts and window.ts is classified hot or not hot', () => {
    const sqlNames = [...STATEMENTS].filter(([, v]) => /\b(SELECT|UPDATE|INSERT|DELETE)\b/.test(v)).map(([k]) => k);
    const unclassified = sqlNames.filter((n) => !(n in HOT) && !(n in NOT_HOT));
    expect(unclassified, 'add each to HOT (and give it a shard predicate) or to NOT_HOT with the reason').toEqual([]);
    // A listed hot statement that does not exist fails its own test below.
  });

  describe('runs: restricted by a shard parameter in every query block', () => {
    for (const name of Object.keys(HOT)) {
      it(`${name} (${HOT[name]})`, () => {
        const sql = sqlOf(name);
        expect(shardFindings(sql).filter((f) => f.table === 'runs').length, 'reads or writes runs').toBeGreaterThan(0);
        expect(problems(sql, 'runs')).toEqual([]);
      });
    }
  });

  describe('jobs: joined co-located with its runs (on shard)', () => {
    for (const name of Object.keys(HOT).filter((n) => shardFindings(STATEMENTS.get(n) ?? '').some((f) => f.table === 'jobs'))) {
      it(name, () => {
        expect(problems(sqlOf(name), 'jobs')).toEqual([]);
      });
    }
  });

  it('catches the removal of any one shard predicate from a hot statement', () => {
    const predicate = /(?:\b[a-z_]+\.)?shard\s*=\s*(?:ANY\s*\(\s*\$\d+(?:::[a-z0-9_]+(?:\[\])?)?\s*\)|\$\d+(?:::[a-z0-9_]+)?)/gi;
    let mutants = 0;
    for (const name of Object.keys(HOT)) {
      const sql = STATEMENTS.get(name);
      if (sql === undefined || problems(sql, 'runs').length > 0) continue; // failing above already
      for (const m of sql.matchAll(predicate)) {
        const mutant = sql.slice(0, m.index) + 'TRUE' + sql.slice(m.index + m[0].length);
        expect(problems(mutant, 'runs'), `${name} without "${m[0]}"`).not.toEqual([]);
        mutants++;
      }
    }
    expect(mutants, 'predicates tried').toBeGreaterThan(0);
  });

  it('flags statements that do not name the shard (the checker itself)', () => {
    const bad = {
      'by id only': `SELECT r.id FROM runs r WHERE r.id = ANY($1::int8[]) AND r.status = 'scheduled'`,
      'joined to shards, no parameter': `UPDATE runs r SET status = 'fired' FROM shards s WHERE r.id = $1 AND r.shard = s.shard AND s.fence = $2`,
      'joined to an input list, no parameter': `UPDATE runs r SET status = 'completed' FROM unnest($1::int8[], $2::int[]) AS d(id, shard) WHERE r.id = d.id AND r.shard = d.shard`,
      'predicate only in a nested block': `UPDATE runs r SET status = 'fired' WHERE r.id IN (SELECT x.id FROM runs x WHERE x.shard = $2) AND r.status = 'scheduled'`,
      'another CTE restricts, this one does not': `WITH a AS (SELECT id FROM runs WHERE shard = $1), b AS (UPDATE runs r SET status = 'x' FROM a WHERE r.id = a.id RETURNING r.id) SELECT * FROM b`,
      'unaliased, no predicate': `SELECT id FROM runs WHERE status = 'fired' AND lease_expires_at < now()`,
      'insert without the shard column': `INSERT INTO runs (job_id, queue, status) SELECT job_id, queue, 'scheduled' FROM x`,
    };
    for (const [why, sql] of Object.entries(bad)) expect(problems(sql, 'runs'), why).not.toEqual([]);

    const good = {
      'one shard': `SELECT r.status FROM runs r WHERE r.id = $1 AND r.shard = $2`,
      'owned shards': `SELECT r.id FROM runs r WHERE r.shard = ANY($1::int[]) AND r.status = 'scheduled'`,
      'unaliased': `SELECT id FROM runs WHERE shard = ANY($2::int[]) AND status = 'fired'`,
      'aliased with AS': `SELECT x.id FROM runs AS x WHERE x.shard = $1`,
      'insert naming the shard': `INSERT INTO runs (job_id, shard, queue) SELECT job_id, shard, queue FROM run_out`,
    };
    for (const [why, sql] of Object.entries(good)) expect(problems(sql, 'runs'), why).toEqual([]);

    expect(problems(`UPDATE runs r SET x = 1 FROM jobs j WHERE r.shard = $1 AND j.id = r.job_id`, 'jobs')).not.toEqual([]);
    expect(problems(`UPDATE runs r SET x = 1 FROM jobs j WHERE r.shard = $1 AND j.id = r.job_id AND j.shard = r.shard`, 'jobs')).toEqual([]);
    expect(problems(`UPDATE jobs SET status = 'dead' FROM run_out WHERE jobs.id = run_out.job_id`, 'jobs')).not.toEqual([]);
    expect(problems(`UPDATE jobs SET status = 'dead' FROM run_out WHERE jobs.id = run_out.job_id AND jobs.shard = run_out.shard`, 'jobs')).toEqual([]);
  });
});
