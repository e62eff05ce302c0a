/**
 * `npm run bench:failover`: what a crash and a planned handoff cost. Three
 * timelane daemons (child processes, members a, b, c) share the shards of a
 * fresh database through Redis leases; runs come due at a steady rate (half
 * at-least-once, half at-most-once) and one in-process worker streams from
 * every daemon. Lag = worker receipt − due_at.
 *
 * Phases (t0 = first due time):
 *   setup     fresh database + Redis prefix, daemons a b c, wait until the
 *             shards are spread over all three, worker, warm-up, ingest of
 *             rate × seconds runs (ScheduleBatch, before t0)
 *   steady    [t0, t0 + --steady): steady-state lag
 *   crash     kill -9 of the victim (most shards, ties b) at t0 + --steady,
 *             or SIGSTOP with --fault stop (it stays frozen until teardown);
 *             its shards and fences come from ListShards just before, the
 *             Redis PTTLs of its member record, liveness key and leases
 *             right after
 *   handoff   once the survivors own everything and kill + TTL + 5 s has
 *             passed: --moves MoveShard calls, one every --move-every s,
 *             alternating between the survivors
 *   drain     until every run that can still arrive did (or last due + --grace)
 *   teardown  worker, clients, daemons, Redis keys, database (Resources),
 *             also on error, Ctrl-C and past --budget
 *
 * stdout: the report; with --json the last line is one JSON object.
 * Progress goes to stderr. Figures: see bench/lib/failover-analysis.ts.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ScheduleInput, type ShardInfo, wallNowMs } from '@timelane/client';
import { FAILOVER_USAGE, parseFailoverArgs, type FailoverOptions } from './lib/failover-args.js';
import { analyze, type KillInfo, type MoveRecord, type ScheduledRun } from './lib/failover-analysis.js';
import { FailoverCluster, runRows, statusCounts } from './lib/failover-cluster.js';
import { failoverJson, failoverText, type FailoverRun } from './lib/failover-report.js';
import { benchRedisPrefix, checkServers, createBenchDatabase } from './lib/infra.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { cpuSnapshot, machineBusyPct, waitForQuietMachine, type CpuSnapshot } from './lib/proc.js';
import { cpuBetweenSnapshots } from './lib/failover-cpu.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installStopHandlers, Resources } from './lib/resources.js';

const MEMBERS = ['a', 'b', 'c'];
const QUEUE = 'failover';
const WARMUP_QUEUE = 'failover-warmup';
const PROBE_QUEUE = 'failover-probe';
const WARMUP_RUNS = 300;
const BATCH = 1000;
const CONCURRENCY = 2000;

function log(msg: string): void {
  process.stderr.write(`bench:failover: ${msg}\n`);
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function sleepUntil(wallMs: number): Promise<void> {
  const ms = wallMs - Date.now();
  if (ms > 0) await sleep(ms);
}

function ownerCounts(shards: ShardInfo[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of shards) if (s.owner) out[s.owner] = (out[s.owner] ?? 0) + 1;
  return out;
}

function pickVictim(opts: FailoverOptions, shards: ShardInfo[]): string {
  if (opts.victim !== 'auto') return opts.victim;
  const counts = ownerCounts(shards);
  const order = ['b', ...MEMBERS.filter((m) => m !== 'b')];
  let best = 'b';
  for (const m of order) if ((counts[m] ?? 0) > (counts[best] ?? 0)) best = m;
  return best;
}

async function run(opts: FailoverOptions, res: Resources, started: number, loadAvgStart: number[], busyBeforePct: number): Promise<FailoverRun> {
  const budgetEndMono = started + opts.budgetSeconds * 1000;
  // --- setup -------------------------------------------------------------
  const db = await createBenchDatabase(opts.adminUrl, opts.shardCount, [], res);
  const prefix = benchRedisPrefix(opts.redisUrl, res);
  log(`database ${db.name}, redis prefix ${prefix}; starting daemons ${MEMBERS.join(', ')}`);
  const cluster = new FailoverCluster(
    {
      db,
      redisUrl: opts.redisUrl,
      prefix,
      leaseTtlMs: opts.leaseTtlMs,
      membershipIntervalMs: opts.membershipIntervalMs,
      poolSize: opts.poolSize,
      daemonArgs: opts.daemonArgs,
      echo: opts.echoDaemon,
    },
    res,
  );
  await cluster.start(MEMBERS);
  await waitFor('the shards to be spread over a, b and c', 30_000, async () => {
    const shards = await cluster.listShards();
    const owners = new Set(shards.map((s) => s.owner));
    return shards.length === opts.shardCount && shards.every((s) => s.owner !== '' && s.owner === s.assignedTo) && MEMBERS.every((m) => owners.has(m));
  }, 100);
  cluster.startWorker([QUEUE, WARMUP_QUEUE], CONCURRENCY);

  // --- warm-up: every daemon's fire path, and the worker's streams --------
  const warmAt = Date.now() + 500;
  await Promise.all(
    MEMBERS.map((m, k) =>
      cluster.member(m).client.scheduleBatch(
        Array.from({ length: WARMUP_RUNS / MEMBERS.length }, (_, i) => ({ queue: WARMUP_QUEUE, at: warmAt + Math.floor(((i * MEMBERS.length + k) * 1000) / WARMUP_RUNS) })),
      ),
    ),
  );
  await waitFor('the warm-up runs to reach the worker', 20_000, () => cluster.receipts.length >= WARMUP_RUNS);
  const far = Date.now() + 3_600_000;
  const probeStart = performance.now();
  await Promise.all(MEMBERS.map((m, k) => cluster.member(m).client.scheduleBatch(Array.from({ length: BATCH }, (_, i) => ({ queue: PROBE_QUEUE, at: far + k * BATCH + i })))));
  const probeRate = (MEMBERS.length * BATCH) / ((performance.now() - probeStart) / 1000);
  log(`warm-up done; probe ingest ${Math.round(probeRate)} runs/s`);

  // --- ingest --------------------------------------------------------------
  const total = Math.round(opts.rate * opts.seconds);
  const t0 = Math.ceil(Date.now() + (total / (probeRate * 0.6)) * 1000 + opts.leadSeconds * 1000);
  const inputs: ScheduleInput[] = Array.from({ length: total }, (_, i) => {
    const alo = i % 2 === 0;
    return {
      queue: QUEUE,
      at: t0 + Math.floor((i * 1000) / opts.rate),
      payload: '',
      delivery: alo ? 'at_least_once' : 'at_most_once',
      ...(alo ? { leaseMs: opts.aloLeaseMs } : {}),
    };
  });
  const lastDue = t0 + Math.floor(((total - 1) * 1000) / opts.rate);
  const scheduled = new Map<number, ScheduledRun>();
  let scheduledLate = 0;
  log(`ingesting ${total} runs, first due in ${Math.round(t0 - Date.now())} ms`);
  const ingestStart = performance.now();
  let next = 0;
  await Promise.all(
    MEMBERS.map(async (m) => {
      const client = cluster.member(m).client;
      while (next < inputs.length) {
        const batch = inputs.slice(next, next + BATCH);
        next += batch.length;
        const results = await client.scheduleBatch(batch);
        const ackedAt = Date.now();
        for (const r of results) {
          scheduled.set(Number(r.run.id), { shard: r.run.shard, dueAtMs: r.run.dueAtMs, alo: r.job.delivery === 'at_least_once' });
          if (ackedAt >= r.run.dueAtMs) scheduledLate++;
        }
      }
    }),
  );
  const ingestPerS = total / ((performance.now() - ingestStart) / 1000);
  const ingestHeadroomMs = t0 - Date.now();
  log(`ingested at ${Math.round(ingestPerS)} runs/s, ${Math.round(ingestHeadroomMs)} ms before the first due time`);

  // --- phase 1: steady state -------------------------------------------------
  const killPlannedAt = t0 + opts.steadySeconds * 1000;
  const daemonPids = MEMBERS.map((m) => cluster.member(m).daemon.pid);
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  await sleepUntil(t0);
  const cpuT0: CpuSnapshot = cpuSnapshot();
  log(`steady state for ${opts.steadySeconds} s…`);
  await sleepUntil(killPlannedAt - 600);
  const before = await cluster.listShards();
  const victim = pickVictim(opts, before);
  const ownersBefore = new Map(before.map((s) => [s.shard, s.owner]));
  const victimShards = before.filter((s) => s.owner === victim).map((s) => s.shard);
  const fences = new Map(before.filter((s) => s.owner === victim).map((s) => [s.shard, s.fence]));

  // --- phase 2: kill -9 --------------------------------------------------------
  await sleepUntil(killPlannedAt);
  const cpuKill = cpuSnapshot();
  const killAt = opts.fault === 'stop' ? cluster.freeze(victim) : await cluster.kill(victim);
  const pt = await cluster.pttls(victim, victimShards).catch(() => undefined);
  const expiry = (ms: number | undefined): number => (pt === undefined || ms === undefined || !Number.isFinite(ms) ? Number.NaN : ms < 0 ? pt.at : pt.at + ms);
  const kill: KillInfo = {
    victim,
    at: killAt,
    shards: victimShards,
    fences,
    ownersBefore,
    memberExpiresAt: expiry(pt?.member),
    aliveExpiresAt: expiry(pt?.alive),
    leaseExpiresAt: new Map(victimShards.map((s) => [s, expiry(pt?.leases.get(s))])),
  };
  log(`${opts.fault === 'stop' ? 'froze (SIGSTOP)' : 'killed'} ${victim} (owned ${victimShards.length} shards); waiting for the takeover`);
  const survivors = MEMBERS.filter((m) => m !== victim);
  const takeoverEnd = killAt + opts.leaseTtlMs + 2000;
  let current: ShardInfo[] = [];
  await waitFor('the survivors to own every shard', Math.max(20_000, opts.leaseTtlMs * 4), async () => {
    current = await cluster.listShards(victim);
    return current.every((s) => survivors.includes(s.owner));
  }, 250).catch((err: unknown) => log(String(err)));

  // --- phase 3: planned handoffs --------------------------------------------------
  const moves: MoveRecord[] = [];
  // Moves start once the takeover window is over and the survivors had a few seconds to catch up.
  const movesFrom = Math.max(Date.now() + 200, takeoverEnd + 3000);
  const slot = opts.moveEverySeconds * 1000;
  const fit = Math.max(0, Math.floor((lastDue - 1500 - movesFrom) / slot) + 1);
  const nMoves = Math.min(opts.moves, fit);
  if (nMoves < opts.moves) log(`only ${nMoves} of ${opts.moves} moves fit before the last due time`);
  const owner = new Map(current.map((s) => [s.shard, s.owner]));
  const moved = new Set<number>();
  for (let i = 0; i < nMoves; i++) {
    await sleepUntil(movesFrom + i * slot);
    if (Date.now() > lastDue - 1500) {
      log(`move ${i + 1} would start too close to the last due time (earlier moves ran long): stopping the moves`);
      break;
    }
    const from = survivors[i % survivors.length];
    const to = survivors[(i + 1) % survivors.length];
    // Prefer a shard the survivor owned from the start (not one it just took over).
    const candidates = [...owner].filter(([s, o]) => o === from && !moved.has(s)).map(([s]) => s);
    const shard = candidates.find((s) => !victimShards.includes(s)) ?? candidates[0];
    if (shard === undefined) continue;
    moved.add(shard);
    const startAt = wallNowMs();
    const rec: MoveRecord = { shard, from, to, startAt, endAt: startAt, handoffMs: Number.NaN };
    try {
      const out = await cluster.member(from).client.moveShard(shard, to, { timeoutMs: 10_000 });
      rec.handoffMs = out.handoffMs;
      owner.set(shard, to);
    } catch (err) {
      rec.error = err instanceof Error ? err.message : String(err);
    }
    rec.endAt = wallNowMs();
    moves.push(rec);
    log(`moved shard ${shard} ${from} -> ${to}${rec.error ? `: FAILED ${rec.error}` : ` in ${rec.handoffMs.toFixed(1)} ms`}`);
  }

  // --- drain -------------------------------------------------------------------------
  // At-most-once runs on the killed shards due during the takeover may be
  // stranded (never redelivered, by design): don't wait for them.
  const victimSet = new Set(victimShards);
  const mayNeverCome = (s: ScheduledRun): boolean => !s.alo && victimSet.has(s.shard) && s.dueAtMs <= takeoverEnd;
  const received = new Set<number>();
  let cursor = 0;
  const absorb = (): void => {
    const r = cluster.receipts;
    for (; cursor < r.length; cursor++) received.add(r.runId[cursor]);
  };
  // Past last due + grace, keep waiting while runs still arrive (an overloaded
  // cluster is late, not lossy), up to --max-drain and 20 s before the budget.
  const graceEnd = lastDue + opts.graceSeconds * 1000;
  const hardEnd = Math.min(lastDue + Math.max(opts.graceSeconds, opts.maxDrainSeconds) * 1000, Date.now() + (budgetEndMono - performance.now()) - 20_000);
  log('waiting for the last runs…');
  let lastCount = -1;
  let lastProgressAt = Date.now();
  for (;;) {
    absorb();
    const now = Date.now();
    if (received.size !== lastCount) {
      lastCount = received.size;
      lastProgressAt = now;
    }
    if (now >= hardEnd) break;
    if (now >= graceEnd && now - lastProgressAt > 1500) break;
    if (now > lastDue + 500) {
      let pending = 0;
      for (const [id, s] of scheduled) if (!received.has(id) && !mayNeverCome(s)) pending++;
      if (pending === 0) break;
    }
    await sleep(200);
  }
  absorb();
  const drainMs = Date.now() - lastDue;
  const cpuEnd = cpuSnapshot();

  // --- gather ---------------------------------------------------------------------------
  const since = killAt - 1; // log times are whole ms
  const assignmentChangedAt = Math.min(...survivors.map((m) => cluster.logEvents(m, 'assignment changed', since)[0]?.at ?? Infinity));
  const acquiredAt = new Map<number, number>();
  for (const m of survivors) {
    for (const e of cluster.logEvents(m, 'shard acquired', since)) {
      const sh = Number(e.line.shard);
      const prev = acquiredAt.get(sh);
      if (victimSet.has(sh) && (prev === undefined || e.at < prev)) acquiredAt.set(sh, e.at);
    }
  }
  for (const m of moves) {
    const from = m.startAt - 1;
    m.releasedAt = cluster.logEvents(m.from, 'shard released', from).find((e) => Number(e.line.shard) === m.shard)?.at;
    m.acquiredAt = cluster.logEvents(m.to, 'shard acquired', from).find((e) => Number(e.line.shard) === m.shard)?.at;
    m.fromAssignmentAt = cluster.logEvents(m.from, 'assignment changed', from)[0]?.at;
    m.toAssignmentAt = cluster.logEvents(m.to, 'assignment changed', from)[0]?.at;
  }
  if (opts.logsDir) {
    mkdirSync(opts.logsDir, { recursive: true });
    for (const m of MEMBERS) writeFileSync(path.join(opts.logsDir, `${m}.jsonl`), cluster.member(m).daemon.logs.map((l) => JSON.stringify(l)).join('\n') + '\n');
    log(`daemon logs written to ${opts.logsDir}`);
  }
  const unreceived = [...scheduled.keys()].filter((id) => !received.has(id));
  const rows = await runRows(db, unreceived);
  const statusAtEnd = await statusCounts(db, QUEUE).catch((err: unknown) => ({ [`error: ${String(err)}`]: 0 }));
  const a = analyze({ scheduled, receipts: cluster.receipts, t0, leaseTtlMs: opts.leaseTtlMs, kill, moves, unreceivedRows: rows, assignmentChangedAt, acquiredAt });
  const rowById = new Map(rows.map((r) => [r.id, r]));
  const lostSample = a.lostIds.slice(0, 10).map((id) => {
    const r = rowById.get(id);
    const s = scheduled.get(id)!;
    const holder = r && r.fence > 0 ? cluster.fenceHolder(s.shard, r.fence) : undefined;
    return {
      id,
      shard: s.shard,
      status: r?.status ?? '?',
      fence: r?.fence ?? Number.NaN,
      alo: s.alo,
      dueMs: s.dueAtMs - killAt,
      claimedMs: r?.claimedAtMs != null ? r.claimedAtMs - killAt : null,
      firedMs: r?.firedAtMs != null ? r.firedAtMs - killAt : null,
      holder: holder?.member ?? '-',
      holderEndMs: holder?.endedAt !== undefined ? holder.endedAt - killAt : null,
      holderEnd: holder?.how ?? '-',
    };
  });
  const workerErrorsByMember: Record<string, number> = {};
  for (const e of cluster.workerErrors) workerErrorsByMember[e.member] = (workerErrorsByMember[e.member] ?? 0) + 1;
  const workerErrorSamples = [...new Set(cluster.workerErrors.map((e) => `${e.member}: ${e.message.slice(0, 120)}`))].slice(0, 4);

  return {
    daemons: MEMBERS.length,
    rate: opts.rate,
    seconds: opts.seconds,
    shardCount: opts.shardCount,
    leaseTtlMs: opts.leaseTtlMs,
    membershipIntervalMs: opts.membershipIntervalMs,
    victim,
    fault: opts.fault,
    victimShards,
    killAt,
    ownersBefore: ownerCounts(before),
    ingestPerS,
    ingestHeadroomMs,
    scheduledLate,
    loadAvgStart,
    loadAvgEnd: os.loadavg(),
    busyBeforePct,
    statusAtEnd,
    workerErrors: cluster.workerErrors.length,
    workerErrorsByMember,
    workerErrorSamples,
    warnings: cluster.problems(40, 8),
    cpuSteady: cpuBetweenSnapshots(cpuT0, cpuKill, daemonPids, db.name, cores),
    cpuAfterKill: cpuBetweenSnapshots(cpuKill, cpuEnd, daemonPids, db.name, cores),
    lostSample,
    elapsedS: (performance.now() - started) / 1000,
    drainMs,
    a,
  };
}

async function main(): Promise<number> {
  let opts: FailoverOptions | 'help';
  try {
    opts = parseFailoverArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench:failover: ${(err as Error).message}\n\n${FAILOVER_USAGE}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${FAILOVER_USAGE}\n`);
    return 0;
  }
  const started = performance.now();
  installStopHandlers(opts.budgetSeconds * 1000);
  await checkServers(opts.adminUrl, opts.redisUrl);
  const machine = await machineInfo(opts.adminUrl, opts.redisUrl);
  process.stdout.write(`${machineLine(machine)}\n`);
  let busyBeforePct: number;
  if (opts.quietWaitSeconds > 0) {
    let told = false;
    busyBeforePct = await waitForQuietMachine(opts.quietBelowPct, opts.quietWaitSeconds * 1000, (busy) => {
      if (!told) log(`machine busy (${Math.round(busy)}% of a core, not ours): waiting up to ${opts.quietWaitSeconds} s for it to settle`);
      told = true;
    });
  } else busyBeforePct = await machineBusyPct(1_000);
  const loadAvgStart = os.loadavg();

  const res = new Resources();
  let result: FailoverRun;
  try {
    result = await run(opts, res, started, loadAvgStart, busyBeforePct);
  } finally {
    log('stopping worker, clients, daemons, Redis keys and database');
    await res.closeAll();
  }
  process.stdout.write(`${failoverText(result)}\n`);
  if (opts.json) process.stdout.write(`${failoverJson(result, machine)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:failover: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    // Resources were closed by run's finally; the exit hook SIGKILLs any daemon left.
    process.exit(1);
  },
);
