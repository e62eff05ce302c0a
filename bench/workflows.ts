/**
 * `npm run bench:workflows`: many workflow runs at once. How fast do steps
 * flow through the engine, and how long from a parent's completion to its
 * child's delivery (the hand-off: event-driven, so milliseconds, not a poll
 * interval)? Does any step run before its parents, twice, or never?
 *
 * The load (defaults): 1,000 workflow runs of 20 steps each, started within
 * a few seconds as a demanding user would start them: the four definitions
 * stored once (PutWorkflow), then StartWorkflows calls of --start-batch
 * starts by name, --start-parallel calls in flight (--start-batch 1 makes
 * them single StartWorkflow calls), four shapes in turn:
 *   chain      20 steps in a line
 *   fan        a root, 18 parallel steps, a join after all 18
 *   diamonds   6 stacked diamonds (a → b, c → d → …) and a tail
 *   lanes      a root, 3 chains of 6, a join after the 3
 * Steps do nothing: the worker's handler returns at once (Complete).
 *
 * Setup: fresh database (migrated, --shards) and Redis prefix, --daemons
 * daemons (child processes), one in-process worker (createWorker, credit
 * --concurrency per daemon, streaming from every daemon). Teardown of
 * everything at the end, on error, on Ctrl-C and past --budget.
 *
 * Figures: steps_per_s = steps received / (last receipt − first start);
 * handoff_ms = child's receipt − the last of its parents' handler ends (the
 * worker sends Complete right after; so this is Complete → commit with the
 * child's run → claim → delivery, end to end, on one clock); order
 * violations (a step received before every parent's handler ended); duplicates (a
 * step received under more than one run id, or one run received again);
 * lost (steps never received); and from Postgres how many runs ended
 * succeeded, and where a hand-off's time went: until the transaction that
 * completes the parent began (its now() is the child's claimed_at: the
 * Complete waiting for the database), then that transaction, its commit and
 * the delivery. --start-rate paces the starts (a load below what the machine
 * can take: the hand-off is then the event path alone). stdout: the machine, a text block, and with --json a last line
 * {"workflows","steps","steps_per_s","handoff_ms":{"p50","p99","max"},"order_violations","duplicates","lost"}.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createWorker, TimelaneClient, type StartWorkflowInput, type WorkflowStepInput } from '@timelane/client';
import { DaemonProcess } from '../ops/local/daemon-process.js';
import { numberFlag } from './lib/args.js';
import { killStrayDaemons, waitFor } from './lib/bench-daemon.js';
import { benchRedisPrefix, checkServers, createBenchDatabase, type BenchDatabase } from './lib/infra.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { receiptNowMs } from './lib/receipt-clock.js';
import { installStopHandlers, onExitKill, Resources } from './lib/resources.js';
import { round, summarize } from './lib/stats.js';

const QUEUE = 'bench-workflows';
const MEMBERS = ['a', 'b', 'c'];

const USAGE = `usage: npm run bench:workflows -- [flags]
  --workflows <n>        workflow runs (default 1000)
  --daemons <n>          1..3 daemons (default 1)
  --shards <n>           shards (default 64)
  --concurrency <n>      worker credit per daemon (default 1000)
  --start-batch <n>      starts per StartWorkflows call (default 50; 1: one StartWorkflow call each)
  --start-parallel <n>   start calls in flight (default 4)
  --start-rate <n>       start at most n workflow runs per second (default 0: as fast as the calls go)
  --inline               send each start its definition inline (default: stored once, started by name)
  --max-in-flight <n>    per-run limit on steps in flight (default 0: none)
  --timeout <s>          give up waiting for steps after this long (default 120)
  --budget <s>           whole run (default 600)
  --database-url-admin <url>  (default postgres://postgres@127.0.0.1:5432/postgres)
  --redis-url <url>      (default redis://127.0.0.1:6379)
  --json                 a JSON summary as the last line
  --help`;

interface Options {
  workflows: number;
  daemons: number;
  shards: number;
  concurrency: number;
  startBatch: number;
  startParallel: number;
  startRate: number;
  inline: boolean;
  maxInFlight: number;
  timeoutS: number;
  budgetS: number;
  adminUrl: string;
  redisUrl: string;
  json: boolean;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      workflows: { type: 'string' },
      daemons: { type: 'string' },
      shards: { type: 'string' },
      concurrency: { type: 'string' },
      'start-batch': { type: 'string' },
      'start-parallel': { type: 'string' },
      'start-rate': { type: 'string' },
      inline: { type: 'boolean' },
      'max-in-flight': { type: 'string' },
      timeout: { type: 'string' },
      budget: { type: 'string' },
      'database-url-admin': { type: 'string' },
      'redis-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (v.help) return 'help';
  return {
    workflows: numberFlag('--workflows', v.workflows, 1000, 1, 100_000),
    daemons: numberFlag('--daemons', v.daemons, 1, 1, 3),
    shards: numberFlag('--shards', v.shards, 64, 1, 4096),
    concurrency: numberFlag('--concurrency', v.concurrency, 1000, 1, 100_000),
    startBatch: numberFlag('--start-batch', v['start-batch'], 50, 1, 1000),
    startParallel: numberFlag('--start-parallel', v['start-parallel'], 4, 1, 1000),
    startRate: numberFlag('--start-rate', v['start-rate'], 0, 0, 1_000_000),
    inline: v.inline ?? false,
    maxInFlight: numberFlag('--max-in-flight', v['max-in-flight'], 0, 0, 10_000),
    timeoutS: numberFlag('--timeout', v.timeout, 120, 1, 3600),
    budgetS: numberFlag('--budget', v.budget, 600, 10, 86_400),
    adminUrl: v['database-url-admin'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: v['redis-url'] ?? 'redis://127.0.0.1:6379',
    json: v.json ?? false,
  };
}

function log(msg: string): void {
  process.stderr.write(`bench:workflows: ${msg}\n`);
}

// ---------------------------------------------------------------- shapes

type Edges = [string, string[]][];

function chain(): Edges {
  return Array.from({ length: 20 }, (_, i) => [`c${i}`, i === 0 ? [] : [`c${i - 1}`]]);
}

function fan(): Edges {
  const mids = Array.from({ length: 18 }, (_, i) => `f${i}`);
  return [['root', []], ...mids.map((m): [string, string[]] => [m, ['root']]), ['join', mids]];
}

function diamonds(): Edges {
  const e: Edges = [['d0', []]];
  let top = 'd0';
  for (let k = 1; k <= 6; k++) {
    const l = `l${k}`;
    const r = `r${k}`;
    const j = `d${k}`;
    e.push([l, [top]], [r, [top]], [j, [l, r]]);
    top = j;
  }
  e.push(['tail', [top]]);
  return e;
}

function lanes(): Edges {
  const e: Edges = [['root', []]];
  const ends: string[] = [];
  for (let lane = 0; lane < 3; lane++)
    for (let i = 0; i < 6; i++) {
      const name = `lane${lane}_${i}`;
      e.push([name, [i === 0 ? 'root' : `lane${lane}_${i - 1}`]]);
      if (i === 5) ends.push(name);
    }
  e.push(['join', ends]);
  return e;
}

const SHAPES: { name: string; edges: Edges }[] = [
  { name: 'chain', edges: chain() },
  { name: 'fan', edges: fan() },
  { name: 'diamonds', edges: diamonds() },
  { name: 'lanes', edges: lanes() },
];

// ---------------------------------------------------------------- the run

interface Receipt {
  runId: string;
  /** When the handler started (receipt clock). */
  at: number;
  /** When the handler returned (the Complete leaves right after). */
  doneAt: number;
}

async function run(opts: Options, res: Resources): Promise<number> {
  for (const s of SHAPES) if (s.edges.length !== 20) throw new Error(`shape ${s.name} has ${s.edges.length} steps`);
  const db: BenchDatabase = await createBenchDatabase(opts.adminUrl, opts.shards, [], res);
  const prefix = benchRedisPrefix(opts.redisUrl, res);
  res.defer('kill stray daemons', () => killStrayDaemons(db.name));
  const ids = MEMBERS.slice(0, opts.daemons);
  log(`database ${db.name}, redis prefix ${prefix}; starting ${ids.join(', ')}`);
  const daemons = await Promise.all(
    ids.map(async (id) => {
      const d = await DaemonProcess.start({ databaseUrl: db.url, redisUrl: opts.redisUrl, args: ['--member-id', id, '--redis-prefix', prefix], startTimeoutMs: 30_000 });
      const unregister = onExitKill(() => d.child.kill('SIGKILL'));
      res.defer(`stop daemon ${id}`, async () => {
        await d.stop(10_000);
        unregister();
      });
      return d;
    }),
  );
  const clients = daemons.map((d) => new TimelaneClient(d.address, { timeoutMs: 60_000 }));
  res.defer('close clients', () => clients.forEach((c) => c.close()));
  await waitFor('the shards to be owned', 60_000, async () => {
    const shards = await clients[0].listShards().catch(() => []);
    return shards.length === opts.shards && shards.every((s) => s.owner !== '');
  }, 200);

  // Receipts by workflow run → step.
  const receipts = new Map<string, Map<string, Receipt[]>>();
  let received = 0;
  let lastReceipt = 0;
  const worker = createWorker({
    address: daemons.map((d) => d.address),
    queues: [QUEUE],
    concurrency: opts.concurrency,
    workerId: `bench-workflows-${process.pid}`,
    reconnectInitialMs: 50,
    reconnectMaxMs: 500,
    closeTimeoutMs: 3_000,
    handler: (r) => {
      const at = receiptNowMs();
      const wf = r.workflow;
      if (!wf) return;
      let steps = receipts.get(wf.workflowRunId);
      if (!steps) receipts.set(wf.workflowRunId, (steps = new Map()));
      const list = steps.get(wf.step) ?? [];
      list.push({ runId: r.runId, at, doneAt: receiptNowMs() });
      steps.set(wf.step, list);
      received++;
      lastReceipt = at;
    },
  });
  res.defer('close worker', () => worker.close(3_000));

  // --- start ---------------------------------------------------------------
  const shapeOf = new Map<string, number>();
  const definitions = SHAPES.map((s) => ({
    name: `bench-${s.name}`,
    maxInFlight: opts.maxInFlight,
    steps: s.edges.map(([name, after]): WorkflowStepInput => ({ name, queue: QUEUE, after, retry: { maxAttempts: 3, initialBackoffMs: 100 } })),
  }));
  if (!opts.inline) for (const d of definitions) await clients[0].putWorkflow(d);
  const startOf = (i: number): StartWorkflowInput =>
    opts.inline ? { definition: definitions[i % SHAPES.length] } : { workflow: definitions[i % SHAPES.length].name };
  const t0 = receiptNowMs();
  let next = 0;
  let calls = 0;
  await Promise.all(
    Array.from({ length: opts.startParallel }, async (_, lane) => {
      for (;;) {
        const from = next;
        if (from >= opts.workflows) return;
        const to = Math.min(opts.workflows, from + opts.startBatch);
        next = to;
        // Paced: call `from` goes out when `from` runs are due to have started.
        const at = opts.startRate > 0 ? t0 + (from / opts.startRate) * 1000 : 0;
        if (at > receiptNowMs()) await new Promise((r) => setTimeout(r, at - receiptNowMs()));
        const client = clients[(calls++ + lane) % clients.length];
        const batch = Array.from({ length: to - from }, (_, k) => startOf(from + k));
        const started = opts.startBatch === 1 ? [await client.startWorkflow(batch[0])] : await client.startWorkflows(batch);
        started.forEach((run, k) => shapeOf.set(run.id, (from + k) % SHAPES.length));
      }
    }),
  );
  const startedS = (receiptNowMs() - t0) / 1000;
  const steps = opts.workflows * 20;
  log(`${opts.workflows} workflow runs started in ${startedS.toFixed(2)} s (${calls} calls); waiting for ${steps} steps`);

  // --- drain ---------------------------------------------------------------
  const deadline = Date.now() + opts.timeoutS * 1000;
  while (received < steps && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  // Let late duplicates show up, and the last Completes commit.
  await new Promise((r) => setTimeout(r, 1_000));

  // --- figures -------------------------------------------------------------
  const handoffs: number[] = [];
  /** Per child (by workflow run and step): when the last of its parents' handlers ended, and when it was received. */
  const childTimes = new Map<string, { parentsDone: number; received: number }>();
  let violations = 0;
  let duplicates = 0;
  let lost = 0;
  for (const [id, k] of shapeOf) {
    const got = receipts.get(id) ?? new Map<string, Receipt[]>();
    for (const [step, after] of SHAPES[k].edges) {
      const rs = got.get(step);
      if (!rs || rs.length === 0) {
        lost++;
        continue;
      }
      duplicates += rs.length - 1; // a second run id, or the same run received again
      const first = Math.min(...rs.map((r) => r.at));
      if (after.length === 0) continue;
      let lastParent = -Infinity;
      for (const p of after) {
        const prs = got.get(p);
        const done = prs && prs.length > 0 ? Math.min(...prs.map((r) => r.doneAt)) : Infinity;
        lastParent = Math.max(lastParent, done);
      }
      if (!(first >= lastParent)) violations++;
      else {
        handoffs.push(first - lastParent);
        childTimes.set(`${id}/${step}`, { parentsDone: lastParent, received: first });
      }
    }
  }
  const pool = new pg.Pool({ connectionString: db.url, max: 1, options: '-c search_path=timelane' });
  const { rows } = await pool.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM workflow_runs GROUP BY state');
  // Where a hand-off's time goes: until the transaction that completes the parent (and fires the child) began
  // (claimed_at is that transaction's now()), then that transaction, its commit and the delivery.
  const { rows: claims } = await pool.query<{ key: string; claimed_ms: string }>(
    `SELECT j.workflow_run_id || '/' || j.workflow_step AS key, (extract(epoch FROM r.claimed_at) * 1000)::float8 AS claimed_ms
     FROM runs r JOIN jobs j ON j.id = r.job_id AND j.shard = r.shard WHERE r.origin = 'workflow' AND r.attempt = 1 AND j.workflow_generation = 1`,
  );
  await pool.end();
  const waiting: number[] = [];
  const dispatch: number[] = [];
  for (const c of claims) {
    const t = childTimes.get(c.key);
    if (!t) continue;
    waiting.push(Number(c.claimed_ms) - t.parentsDone);
    dispatch.push(t.received - Number(c.claimed_ms));
  }
  const w = summarize(waiting);
  const x = summarize(dispatch);
  const byState = Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  const spanS = (lastReceipt - t0) / 1000;
  const stepsPerS = received / spanS;
  const h = summarize(handoffs);

  process.stdout.write(
    [
      `workflows ${opts.workflows} × 20 steps (chain, fan-out/fan-in, diamonds, lanes), ${opts.daemons} daemon${opts.daemons > 1 ? 's' : ''}, ${opts.shards} shards, max in flight ${opts.maxInFlight || 'none'}`,
      `  started in ${startedS.toFixed(2)} s (${calls} ${opts.startBatch === 1 ? 'StartWorkflow' : `StartWorkflows calls of ≤ ${opts.startBatch}`}, ${opts.startParallel} in flight${opts.startRate > 0 ? `, ≤ ${opts.startRate}/s` : ''}, ${opts.inline ? 'inline definitions' : 'stored definitions by name'}); all steps in ${spanS.toFixed(2)} s: ${Math.round(stepsPerS)} steps/s (${received} received of ${steps})`,
      `  handoff (parent's completion → child's delivery) ms: p50 ${round(h.p50)}  p99 ${round(h.p99)}  max ${round(h.max)}  (${h.count} hand-offs)`,
      `    of which until the parent's completing transaction began (answer queued for the database) ms: p50 ${round(w.p50)}  p99 ${round(w.p99)}`,
      `    and that transaction, its commit and the child's delivery ms: p50 ${round(x.p50)}  p99 ${round(x.p99)}`,
      `  order violations ${violations}, duplicates ${duplicates}, lost ${lost}; workflow runs: ${JSON.stringify(byState)}`,
    ].join('\n') + '\n',
  );
  if (opts.json)
    process.stdout.write(
      `${JSON.stringify({
        workflows: opts.workflows,
        steps,
        steps_per_s: round(stepsPerS, 0),
        handoff_ms: { p50: round(h.p50), p99: round(h.p99), max: round(h.max) },
        order_violations: violations,
        duplicates,
        lost,
      })}\n`,
    );
  return violations === 0 && duplicates === 0 && lost === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench:workflows: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  installStopHandlers(opts.budgetS * 1000);
  await checkServers(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(await machineInfo(opts.adminUrl, opts.redisUrl))}\n`);
  const res = new Resources();
  try {
    return await run(opts, res);
  } finally {
    await res.closeAll();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:workflows: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
